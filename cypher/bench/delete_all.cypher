// summary: benchmark clean-up: removes the benchmark nodes in bounded batches
// params: {"limit": 10000}
MATCH (n:BenchNode)
WITH n LIMIT $limit
DETACH DELETE n
RETURN count(*) AS deleted
