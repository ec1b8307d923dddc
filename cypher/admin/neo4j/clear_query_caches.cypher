// summary: drops every cached execution plan, so the next statements are planned for the store as it is now (called after a load that changed the store's size a lot: Neo4j kept plans made for a near-empty store and ran lookups 10x slower)
// backend: neo4j
// params: {}
CALL db.clearQueryCaches()
