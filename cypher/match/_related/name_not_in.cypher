// fragment of the related-image match builder (covr.related.cypher_path); placeholders {{name}} take identifiers or rendered fragments
// summary: a name outside a deny-list
NOT {{v}}.name IN ${{p}}
