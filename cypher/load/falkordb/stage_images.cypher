// summary: the staging half of an atomic replacement (covr.graph.store.GraphStore.replace_images): creates the new version of the images listed in $only from the rows of create_images, under an image labelled StagedImage (which no reader matches: every reader reaches objects, relations and rel-mods from an Image) with their keys derived as load/create_images derives them (the stored version has the same keys until the switch: keys are unique by construction, covr.scene.limits, and FalkorDB holds no constraint on them, graph/falkor.py UNIQUE_KEYS), so the stored version stays whole and visible until load/falkordb/switch_images swaps them in one statement; $stage marks this attempt and $staged_at (seconds since the epoch) lets a later load drop what a killed one left
// backend: falkordb
// params: {"sep": ":", "relation_sep": ":r:", "stage": "s-1", "staged_at": 1700000000, "only": ["example:1"], "ids": ["example:1"], "images": [{"id": "example:1", "source": "example", "split": "val", "original_id": "1", "width": 640, "height": 480}], "objects": [[["1", "man", ["young"], 1, 2, 30, 40, null, null], ["2", "paper", [], null, null, null, null, ["n14974264"], null]]], "relations": [[[0, 1, "stapling", "stapling", null, [[1, "surface", "onto"]]]]]}
UNWIND range(0, size($ids) - 1) AS k
WITH k, $ids[k] AS image_id
WHERE image_id IN $only
CREATE (i:StagedImage)
SET i = $images[k]
SET i.stage = $stage, i.staged_at = $staged_at
WITH k, image_id, i
UNWIND $objects[k] AS o
CREATE (i)-[:HAS]->(n:Object)
SET n.key = image_id + $sep + o[0], n.id = o[0], n.name = o[1], n.attributes = o[2],
    n.x = o[3], n.y = o[4], n.w = o[5], n.h = o[6], n.synsets = o[7], n.names = o[8]
WITH k, image_id, collect(n) AS nodes
WITH image_id, nodes, $relations[k] AS relations
UNWIND relations AS rel
WITH image_id, nodes, rel, nodes[rel[0]] AS subject, nodes[rel[1]] AS target
CREATE (subject)-[:SUBJ]->(r:Relation)-[:OBJ]->(target)
SET r.key = image_id + $relation_sep + rel[2], r.id = rel[2], r.name = rel[3],
    r.synsets = rel[4]
WITH nodes, rel, r
UNWIND rel[5] AS mod
WITH r, mod, nodes[mod[0]] AS target
CREATE (r)-[:MOD]->(m:RelMod)-[:OBJ]->(target)
SET m.key = r.key + $sep + mod[1], m.id = mod[1], m.name = mod[2]
