// fragment of the related-image match builder (covr.related.cypher_path); placeholders {{name}} take identifiers or rendered fragments
// summary: some attribute at all
size({{v}}.attributes) > 0
