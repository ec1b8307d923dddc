// fragment of the related-image match builder (covr.related.cypher_path); placeholders {{name}} take identifiers or rendered fragments
// summary: a name equal to the original or from an allow-list (combined branches)
({{v}}.name = ${{x}} OR {{v}}.name IN ${{p}})
