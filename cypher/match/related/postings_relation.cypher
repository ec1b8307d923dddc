// summary: ids of the images holding a relation with this name (index-backed on Relation.name)
// params: {"name": "wearing"}
MATCH (i:Image)-[:HAS]->(:Object)-[:SUBJ]->(r:Relation {name: $name})
RETURN DISTINCT i.id AS id
