// fragment of the related-image match builder (covr.related.cypher_path); placeholders {{name}} take identifiers or rendered fragments
// summary: a rel-mod node of a bound relation, pointing to a new object
MATCH ({{r}})-[:MOD]->({{m}}:RelMod)-[:OBJ]->({{t}}:Object)
