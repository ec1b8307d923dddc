// fragment of the related-image match builder (covr.related.cypher_path); placeholders {{name}} take identifiers or rendered fragments
// summary: the candidate images of a branch (followed by image_in and a WITH, so FalkorDB starts from the Image.id index)
MATCH (i:Image)
