// fragment of the related-image match builder (covr.related.cypher_path); placeholders {{name}} take identifiers or rendered fragments
// summary: one property of a bound variable, an item of a returned list
{{v}}.{{prop}}
