// fragment of the related-image match builder (covr.related.cypher_path); placeholders {{name}} take identifiers or rendered fragments
// summary: a relation node from a bound subject to a new target object
MATCH ({{s}})-[:SUBJ]->({{r}}:Relation)-[:OBJ]->({{t}}:Object)
