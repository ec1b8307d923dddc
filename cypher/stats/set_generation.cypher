// summary: stamps a new generation on the name statistics (lookups drop their caches when it changes) and clears the pending-load mark
// params: {"key": "name_stats", "generation": "example-1", "images": 0}
MERGE (m:Meta {key: $key})
SET m.generation = $generation, m.images = $images
REMOVE m.pending
