// fragment of the related-image match builder (covr.related.cypher_path); placeholders {{name}} take identifiers or rendered fragments
// summary: the image holding the root object of a direct branch
MATCH (i:Image)-[:HAS]->({{o}})
