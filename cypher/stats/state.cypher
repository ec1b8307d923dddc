// summary: the number of stored images and the name statistics' generation, the image count they were computed for and the pending-load mark (nulls when never computed); a plain MATCH + count() still gives one row on an empty store, and lets Neo4j read the count from its count store instead of scanning every image
// params: {"key": "name_stats"}
MATCH (i:Image)
WITH count(i) AS stored
OPTIONAL MATCH (m:Meta {key: $key})
RETURN m.generation AS generation, m.images AS images, m.pending AS pending, stored
