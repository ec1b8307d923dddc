// summary: load benchmark baseline: one Object (and its HAS edge) per statement
// params: {"image": "bench:1", "props": {"key": "bench:1:1", "name": "man"}}
MATCH (i:Image {id: $image})
CREATE (i)-[:HAS]->(o:Object)
SET o = $props
