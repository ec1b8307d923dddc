// fragment of the related-image match builder (covr.related.cypher_path); placeholders {{name}} take identifiers or rendered fragments
// summary: some attribute from an allow-list
any(a IN {{v}}.attributes WHERE a IN ${{p}})
