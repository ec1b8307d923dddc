// fragment of the related-image match builder (covr.related.cypher_path); placeholders {{name}} take identifiers or rendered fragments
// summary: an object's attribute list when the caller reads it ($..._read), else null; a missing list reads as empty, so a reading keeps one item per read position
CASE WHEN ${{read}} THEN coalesce({{v}}.attributes, []) END
