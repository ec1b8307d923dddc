// fragment of the related-image match builder (covr.related.cypher_path); placeholders {{name}} take identifiers or rendered fragments
// summary: restricts a branch to one batch of candidate image ids
i.id IN ${{ids}}
