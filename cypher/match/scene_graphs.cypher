// summary: several images with all their objects, relations and rel-mods (one row per image present, the row shape of match/scene_graph) for the presence filter's batched reads; relations are collected first and objects last, so no grouping key holds the objects list (grouping by it per relation row made load/scene_graphs ~2x slower)
// params: {"ids": ["example:1", "example:missing"]}
UNWIND $ids AS image_id
MATCH (i:Image {id: image_id})
OPTIONAL MATCH (i)-[:HAS]->(s:Object)-[:SUBJ]->(r:Relation)-[:OBJ]->(t:Object)
OPTIONAL MATCH (r)-[:MOD]->(m:RelMod)-[:OBJ]->(mo:Object)
WITH i, s, r, t,
     collect(CASE WHEN m IS NULL THEN NULL ELSE {props: properties(m), object: mo.id} END) AS mods
WITH i,
     collect(CASE WHEN r IS NULL THEN NULL ELSE {props: properties(r), subject: s.id, object: t.id, mods: mods} END) AS relations
OPTIONAL MATCH (i)-[:HAS]->(o:Object)
WITH i, relations, collect(properties(o)) AS objects
RETURN properties(i) AS image, objects, relations
