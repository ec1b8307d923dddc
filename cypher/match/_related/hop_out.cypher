// fragment of the related-image match builder (covr.related.cypher_path); placeholders {{name}} take identifiers or rendered fragments
// summary: one step of a direct branch along an edge leaving a bound node
MATCH ({{a}})-[:{{type}}]->({{b}}:{{label}})
