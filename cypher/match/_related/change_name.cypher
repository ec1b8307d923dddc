// fragment of the related-image match builder (covr.related.cypher_path); placeholders {{name}} take identifiers or rendered fragments
// summary: 1 when a name differs from the original (counts the edits of a combined branch)
CASE WHEN {{v}}.name = ${{p}} THEN 0 ELSE 1 END
