// fragment of the related-image match builder (covr.related.cypher_path); placeholders {{name}} take identifiers or rendered fragments
// summary: some attribute equal to the original or from an allow-list (combined branches)
any(a IN {{v}}.attributes WHERE a = ${{x}} OR a IN ${{p}})
