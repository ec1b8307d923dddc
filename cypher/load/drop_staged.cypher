// summary: deletes staged images (load/falkordb/stage_images) of the attempt $stage, or staged before $before (seconds since the epoch), with their objects, relations and rel-mods: what a failed or killed replacement left; no stored image is touched (the staged ones hang off a StagedImage)
// params: {"stage": "s-1", "before": 1600000000}
MATCH (s:StagedImage)
WHERE s.stage = $stage OR s.staged_at < $before
OPTIONAL MATCH (s)-[:HAS]->(o:Object)
OPTIONAL MATCH (o)-[:SUBJ]->(r:Relation)
OPTIONAL MATCH (r)-[:MOD]->(m:RelMod)
WITH s, collect(DISTINCT o) AS objects, collect(DISTINCT r) AS relations,
     collect(DISTINCT m) AS mods
FOREACH (n IN mods | DETACH DELETE n)
FOREACH (n IN relations | DETACH DELETE n)
FOREACH (n IN objects | DETACH DELETE n)
DETACH DELETE s
RETURN count(*) AS images
