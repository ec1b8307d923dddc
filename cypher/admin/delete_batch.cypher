// summary: deletes up to $limit nodes with their relationships; repeated until it returns 0
// params: {"limit": 10000}
MATCH (n)
WITH n LIMIT $limit
DETACH DELETE n
RETURN count(*) AS deleted
