// summary: every index with its state on Neo4j
// backend: neo4j
SHOW INDEXES YIELD labelsOrTypes, properties, state
RETURN labelsOrTypes[0] AS label, properties, state AS status
