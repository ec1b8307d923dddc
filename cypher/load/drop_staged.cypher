// summary: deletes staged images (load/stage_images) of the attempt $stage, or staged before $before (seconds since the epoch), with their staged objects, relations and rel-mods: what a failed or killed replacement left; no stored image is touched
// params: {"stage": "s-1", "before": 1600000000}
// setup: load/stage_images
MATCH (s:StagedImage)
WHERE s.stage = $stage OR s.staged_at < $before
OPTIONAL MATCH (s)-[:HAS]->(o:StagedObject)
OPTIONAL MATCH (o)-[:SUBJ]->(r:StagedRelation)
OPTIONAL MATCH (r)-[:MOD]->(m:StagedRelMod)
WITH s, collect(DISTINCT o) AS objects, collect(DISTINCT r) AS relations,
     collect(DISTINCT m) AS mods
FOREACH (n IN mods | DETACH DELETE n)
FOREACH (n IN relations | DETACH DELETE n)
FOREACH (n IN objects | DETACH DELETE n)
DETACH DELETE s
RETURN count(*) AS images
