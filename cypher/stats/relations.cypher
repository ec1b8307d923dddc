// summary: name statistics of relations: per split and relation name, the images and Relation nodes holding it, as (:NameStat) nodes
// params: {"type": "relation"}
MATCH (i:Image)-[:HAS]->(:Object)-[:SUBJ]->(r:Relation)
WITH i.split AS split, r.name AS name, count(r) AS nodes, count(DISTINCT i) AS images
CREATE (s:NameStat)
SET s.type = $type, s.split = split, s.name = name, s.images = images, s.nodes = nodes
