// summary: the current generation of the name statistics and the image count it was computed for (no row when never computed)
// params: {"key": "name_stats"}
MATCH (m:Meta {key: $key})
RETURN m.generation AS generation, m.images AS images
