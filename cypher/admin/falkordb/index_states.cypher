// summary: every index with its state (FalkorDB builds indexes in the background)
// backend: falkordb
CALL db.indexes() YIELD label, properties, status
RETURN label, properties, status
