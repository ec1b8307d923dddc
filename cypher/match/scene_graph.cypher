// summary: one image with all its objects, relations and rel-mods, for get_scene_graph (no row when the image is absent)
// params: {"image_id": "example:1"}
MATCH (i:Image {id: $image_id})
OPTIONAL MATCH (i)-[:HAS]->(o:Object)
WITH i, collect(properties(o)) AS objects
OPTIONAL MATCH (i)-[:HAS]->(s:Object)-[:SUBJ]->(r:Relation)-[:OBJ]->(t:Object)
OPTIONAL MATCH (r)-[:MOD]->(m:RelMod)-[:OBJ]->(mo:Object)
WITH i, objects, s, r, t,
     collect(CASE WHEN m IS NULL THEN NULL ELSE {props: properties(m), object: mo.id} END) AS mods
RETURN properties(i) AS image, objects,
       collect(CASE WHEN r IS NULL THEN NULL ELSE {props: properties(r), subject: s.id, object: t.id, mods: mods} END) AS relations
