// summary: ids of the images holding a rel-mod with this name (index-backed on RelMod.name)
// params: {"name": "using"}
MATCH (i:Image)-[:HAS]->(:Object)-[:SUBJ]->(:Relation)-[:MOD]->(m:RelMod {name: $name})
RETURN DISTINCT i.id AS id
