// summary: which of the given Image.id values are in the store (resume checks that checkpointed batches really arrived)
// params: {"ids": ["example:1", "example:missing"]}
UNWIND $ids AS id
MATCH (i:Image {id: id})
RETURN i.id AS id
