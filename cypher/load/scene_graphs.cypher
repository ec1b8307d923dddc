// summary: several images with all their objects, relations and rel-mods in one statement (one row per image present; the batched form of match/scene_graph, for digests and bulk read-back)
// params: {"ids": ["example:1", "example:missing"]}
UNWIND $ids AS image_id
MATCH (i:Image {id: image_id})
OPTIONAL MATCH (i)-[:HAS]->(o:Object)
WITH i, collect(properties(o)) AS objects
OPTIONAL MATCH (i)-[:HAS]->(s:Object)-[:SUBJ]->(r:Relation)-[:OBJ]->(t:Object)
OPTIONAL MATCH (r)-[:MOD]->(m:RelMod)-[:OBJ]->(mo:Object)
WITH i, objects, s, r, t,
     collect(CASE WHEN m IS NULL THEN NULL ELSE {props: properties(m), object: mo.id} END) AS mods
RETURN properties(i) AS image, objects,
       collect(CASE WHEN r IS NULL THEN NULL ELSE {props: properties(r), subject: s.id, object: t.id, mods: mods} END) AS relations
