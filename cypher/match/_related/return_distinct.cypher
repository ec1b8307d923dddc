// fragment of the related-image match builder (covr.related.cypher_path); placeholders {{name}} take identifiers or rendered fragments
// summary: a counting direct branch returns each distinct (image, names found) once: the caller sorts the names into edit signatures
RETURN DISTINCT i.id AS image_id, ${{tag}} AS tag, [{{names}}] AS names, [{{attributes}}] AS attributes, [{{relation_names}}] AS relation_names, [{{relmod_names}}] AS relmod_names
