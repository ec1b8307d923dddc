// summary: benchmark: creates one small node per row of a batch
// params: {"rows": [{"id": 1, "name": "a", "score": 0.5}]}
UNWIND $rows AS row
CREATE (:BenchNode {id: row.id, name: row.name, score: row.score})
