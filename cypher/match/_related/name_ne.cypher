// fragment of the related-image match builder (covr.related.cypher_path); placeholders {{name}} take identifiers or rendered fragments
// summary: a changed name: anything but the original
{{v}}.name <> ${{p}}
