// summary: creates whole images (one row each: image, objects, relations, rel-mods) in one statement; run delete_images on the same ids first
// params: {"rows": [{"image": {"id": "example:1", "source": "example", "split": "val", "original_id": "1", "width": 640, "height": 480}, "objects": [{"key": "example:1:1", "id": "1", "name": "man", "attributes": ["young"], "x": 1, "y": 2, "w": 30, "h": 40}, {"key": "example:1:2", "id": "2", "name": "paper", "attributes": []}, {"key": "example:1:3", "id": "3", "name": "wall", "attributes": []}], "relations": [{"s": 0, "o": 1, "props": {"key": "example:1:r:1", "id": "1", "name": "stapling"}, "mods": [{"o": 2, "props": {"key": "example:1:r:1:surface", "id": "surface", "name": "onto"}}]}]}]}
UNWIND $rows AS row
CREATE (i:Image)
SET i = row.image
WITH i, row
UNWIND row.objects AS object
CREATE (i)-[:HAS]->(n:Object)
SET n = object
WITH row, collect(n) AS nodes
UNWIND row.relations AS relation
WITH nodes, relation, nodes[relation.s] AS subject, nodes[relation.o] AS target
CREATE (subject)-[:SUBJ]->(r:Relation)-[:OBJ]->(target)
SET r = relation.props
WITH nodes, relation, r
UNWIND relation.mods AS mod
WITH r, mod, nodes[mod.o] AS target
CREATE (r)-[:MOD]->(m:RelMod)-[:OBJ]->(target)
SET m = mod.props
