// fragment of the related-image match builder (covr.related.cypher_path); placeholders {{name}} take identifiers or rendered fragments
// summary: some attribute other than the original and outside a deny-list
any(a IN {{v}}.attributes WHERE a <> ${{x}} AND NOT a IN ${{p}})
