// fragment of the related-image match builder (covr.related.cypher_path); placeholders {{name}} take identifiers or rendered fragments
// summary: some attribute other than the original
any(a IN {{v}}.attributes WHERE a <> ${{p}})
