// fragment of the related-image match builder (covr.related.cypher_path); placeholders {{name}} take identifiers or rendered fragments
// summary: the candidate images of a branch, one batch of ids; each id is looked up in the Image.id index
// (Neo4j plans `i.id IN $ids` as a label scan once the list is long; an UNWIND keeps one index seek per id on both engines)
UNWIND ${{ids}} AS image_id
MATCH (i:Image {id: image_id})
