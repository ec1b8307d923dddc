// summary: creates whole images in one statement from compact rows (see covr.scene.records.to_store_row): $images[k] = the Image properties, $objects[k] = its objects, $relations[k] = its relations with rel-mods, $ids[k] = its Image.id; keys are derived from ids with the separators $sep and $relation_sep (covr.scene.records); images already present are left alone, so a retried statement changes nothing (run delete_images first to replace them)
// params: {"sep": ":", "relation_sep": ":r:", "ids": ["example:1"], "images": [{"id": "example:1", "source": "example", "split": "val", "original_id": "1", "width": 640, "height": 480}], "objects": [[["1", "man", ["young"], 1, 2, 30, 40, null, null], ["2", "paper", [], null, null, null, null, ["n14974264"], null], ["3", "wall", [], 5, 6, 7, 8, null, ["partition"]]]], "relations": [[[0, 1, "stapling", "stapling", null, [[2, "surface", "onto"]]]]]}
UNWIND range(0, size($ids) - 1) AS k
WITH k, $ids[k] AS image_id
OPTIONAL MATCH (existing:Image {id: image_id})
WITH k, image_id, existing
WHERE existing IS NULL
CREATE (i:Image)
SET i = $images[k]
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
SET r.key = image_id + $relation_sep + rel[2], r.id = rel[2], r.name = rel[3], r.synsets = rel[4]
WITH nodes, rel, r
UNWIND rel[5] AS mod
WITH r, mod, nodes[mod[0]] AS target
CREATE (r)-[:MOD]->(m:RelMod)-[:OBJ]->(target)
SET m.key = r.key + $sep + mod[1], m.id = mod[1], m.name = mod[2]
