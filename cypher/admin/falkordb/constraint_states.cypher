// summary: every constraint with its state (FalkorDB builds them in the background)
// backend: falkordb
CALL db.constraints() YIELD label, properties, status
RETURN label, properties, status
