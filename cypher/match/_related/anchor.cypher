// fragment of the related-image match builder (covr.related.cypher_path); placeholders {{name}} take identifiers or rendered fragments
// summary: the anchor of a direct (index-started) branch: the node of the rarest fixed name
MATCH ({{v}}:{{label}})
