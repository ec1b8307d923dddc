// fragment of the related-image match builder (covr.related.cypher_path); placeholders {{name}} take identifiers or rendered fragments
// summary: a planning boundary after each MATCH: FalkorDB would otherwise start from another name index instead of the candidate images
WITH {{bound}}
