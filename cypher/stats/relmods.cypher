// summary: name statistics of rel-mods: per split and rel-mod name, the images and RelMod nodes holding it, as (:NameStat) nodes
// params: {"type": "relmod"}
MATCH (i:Image)-[:HAS]->(:Object)-[:SUBJ]->(:Relation)-[:MOD]->(m:RelMod)
WITH i.split AS split, m.name AS name, count(m) AS nodes, count(DISTINCT i) AS images
CREATE (s:NameStat)
SET s.type = $type, s.split = split, s.name = name, s.images = images, s.nodes = nodes
