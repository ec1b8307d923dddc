// fragment of the related-image match builder (covr.related.cypher_path); placeholders {{name}} take identifiers or rendered fragments
// summary: one property of a bound variable when the caller reads it ($..._read), else null: an item of a returned list
CASE WHEN ${{read}} THEN {{v}}.{{prop}} END
