// fragment of the related-image match builder (covr.related.cypher_path); placeholders {{name}} take identifiers or rendered fragments
// summary: the first condition of a MATCH
WHERE {{condition}}
