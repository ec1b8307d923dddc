// summary: name statistics of attributes: per split and attribute, the images and attribute occurrences (objects listing it), as (:NameStat) nodes
// params: {"type": "attribute"}
MATCH (i:Image)-[:HAS]->(o:Object)
UNWIND o.attributes AS a
WITH i.split AS split, a AS name, count(*) AS nodes, count(DISTINCT i) AS images
CREATE (s:NameStat)
SET s.type = $type, s.split = split, s.name = name, s.images = images, s.nodes = nodes
