// fragment of the related-image match builder (covr.related.cypher_path); placeholders {{name}} take identifiers or rendered fragments
// summary: the edit budget of a combined branch
{{c}} <= ${{p}}
