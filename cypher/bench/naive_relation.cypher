// summary: load benchmark baseline: one Relation (and its two edges) per statement
// params: {"subject": "bench:1:1", "target": "bench:1:2", "props": {"key": "bench:1:r:1", "name": "wearing"}}
MATCH (s:Object {key: $subject}), (t:Object {key: $target})
CREATE (s)-[:SUBJ]->(r:Relation)-[:OBJ]->(t)
SET r = $props
