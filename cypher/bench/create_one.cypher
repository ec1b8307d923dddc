// summary: benchmark baseline: creates one small node per statement
// params: {"id": 1, "name": "a", "score": 0.5}
CREATE (n:BenchNode)
SET n.id = $id, n.name = $name, n.score = $score
