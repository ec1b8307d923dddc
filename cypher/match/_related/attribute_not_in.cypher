// fragment of the related-image match builder (covr.related.cypher_path); placeholders {{name}} take identifiers or rendered fragments
// summary: some attribute outside a deny-list
any(a IN {{v}}.attributes WHERE NOT a IN ${{p}})
