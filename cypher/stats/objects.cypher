// summary: name statistics of objects: per split and object name, the images and Object nodes holding it, as (:NameStat {type, split, name, images, nodes})
// params: {"type": "object"}
MATCH (i:Image)-[:HAS]->(o:Object)
WITH i.split AS split, o.name AS name, count(o) AS nodes, count(DISTINCT i) AS images
CREATE (s:NameStat)
SET s.type = $type, s.split = split, s.name = name, s.images = images, s.nodes = nodes
