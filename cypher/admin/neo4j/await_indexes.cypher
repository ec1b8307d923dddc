// summary: blocks until every index is online or the timeout (seconds) passes
// backend: neo4j
// params: {"seconds": 60}
CALL db.awaitIndexes($seconds)
