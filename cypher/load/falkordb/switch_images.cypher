// summary: the switching half of an atomic replacement: for every image staged under $stage (load/falkordb/stage_images), deletes the stored image of the same id with its objects, relations and rel-mods and relabels the staged image as Image, in one statement, so a reader or a crash sees the old version or the new one and never neither (FalkorDB rolls back a failed statement that deletes and relabels exactly; it creates nothing, and relabelling only the image keeps it fast: relabelling every node cost 18 s per 1,000 images). The staged nodes already carry their keys: setting them here cost more than the delete (docs/notes/2026-12-07-dataset-and-replacement.md)
// backend: falkordb
// params: {"stage": "s-1"}
// setup: load/falkordb/stage_images
MATCH (s:StagedImage)
WHERE s.stage = $stage
OPTIONAL MATCH (old:Image {id: s.id})
OPTIONAL MATCH (old)-[:HAS]->(o:Object)
OPTIONAL MATCH (o)-[:SUBJ]->(r:Relation)
OPTIONAL MATCH (r)-[:MOD]->(m:RelMod)
WITH s, collect(DISTINCT old) AS olds, collect(DISTINCT o) AS objects,
     collect(DISTINCT r) AS relations, collect(DISTINCT m) AS mods
FOREACH (n IN mods | DETACH DELETE n)
FOREACH (n IN relations | DETACH DELETE n)
FOREACH (n IN objects | DETACH DELETE n)
FOREACH (n IN olds | DETACH DELETE n)
WITH s
REMOVE s:StagedImage, s.stage, s.staged_at
SET s:Image
RETURN count(s) AS images
