// fragment of the related-image match builder (covr.related.cypher_path); placeholders {{name}} take identifiers or rendered fragments
// summary: one row per embedding: the names found at every position (attributes as the full lists)
RETURN i.id AS image_id, ${{tag}} AS tag, [{{names}}] AS names, [{{attributes}}] AS attributes, [{{relation_names}}] AS relation_names, [{{relmod_names}}] AS relmod_names
