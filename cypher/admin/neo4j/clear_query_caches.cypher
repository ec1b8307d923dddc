// summary: resamples every index and waits for it, then drops every cached execution plan, so the next statements are planned for the store as it is now with statistics of its present size (called after a load that changed the store's size a lot: Neo4j kept plans made for a near-empty store and ran lookups 10x slower; planned again over an index sampled while empty, a name lookup came back as a whole-index scan)
// backend: neo4j
// params: {}
CALL db.prepareForReplanning()
