// summary: the part of several images' scene graphs that the presence model reads (object ids, names and attributes; relation triples), one row per image present: the presence filter judges many candidate distractors per lookup, and their whole scene graphs (boxes, synsets, rel-mods, property maps) cost about twice as much to read; maps, not lists, because a collected list's order is the engine's
// params: {"ids": ["example:1", "example:missing"]}
UNWIND $ids AS image_id
MATCH (i:Image {id: image_id})
OPTIONAL MATCH (i)-[:HAS]->(o:Object)
WITH i, collect(CASE WHEN o IS NULL THEN NULL ELSE {id: o.id, name: o.name, attributes: o.attributes} END) AS objects
OPTIONAL MATCH (i)-[:HAS]->(s:Object)-[:SUBJ]->(r:Relation)-[:OBJ]->(t:Object)
RETURN i.id AS id, i.split AS split, objects,
       collect(CASE WHEN r IS NULL THEN NULL ELSE {subject: s.id, name: r.name, object: t.id} END) AS relations
