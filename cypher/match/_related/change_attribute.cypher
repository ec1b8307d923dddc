// fragment of the related-image match builder (covr.related.cypher_path); placeholders {{name}} take identifiers or rendered fragments
// summary: 1 when an object lacks the original attribute (counts the edits of a combined branch)
CASE WHEN ${{p}} IN {{v}}.attributes THEN 0 ELSE 1 END
