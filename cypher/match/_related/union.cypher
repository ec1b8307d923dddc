// fragment of the related-image match builder (covr.related.cypher_path); placeholders {{name}} take identifiers or rendered fragments
// summary: joins the branches of one round (one branch per edit signature)
UNION ALL
