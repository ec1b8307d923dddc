// fragment of the related-image match builder (covr.related.cypher_path); placeholders {{name}} take identifiers or rendered fragments
// summary: two subgraph objects map to different image objects
{{a}} <> {{b}}
