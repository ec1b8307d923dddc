// fragment of the related-image match builder (covr.related.cypher_path); placeholders {{name}} take identifiers or rendered fragments
// summary: restricts a direct branch to one split
i.split = ${{p}}
