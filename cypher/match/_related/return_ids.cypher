// fragment of the related-image match builder (covr.related.cypher_path); placeholders {{name}} take identifiers or rendered fragments
// summary: a direct branch returns the distinct images it matched (its exact candidate pool)
RETURN DISTINCT i.id AS image_id, ${{tag}} AS tag
