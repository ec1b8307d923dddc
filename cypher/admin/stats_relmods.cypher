// summary: rel-mods (imSitu role modifiers) per source and split
MATCH (i:Image)-[:HAS]->(:Object)-[:SUBJ]->(:Relation)-[:MOD]->(m:RelMod)
RETURN i.source AS source, i.split AS split, count(m) AS relmods
