// fragment of the related-image match builder (covr.related.cypher_path); placeholders {{name}} take identifiers or rendered fragments
// summary: the root object of the subgraph inside a candidate image
MATCH (i)-[:HAS]->({{o}}:Object)
