// summary: marks the name statistics as possibly behind the store while a load writes (a crash leaves the mark, so the next load recounts everything)
// params: {"key": "name_stats", "token": "load-1"}
MERGE (m:Meta {key: $key})
SET m.pending = $token
