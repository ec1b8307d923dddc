// summary: removes images (by Image.id) with their objects, relations and rel-mods, so the next create_images makes a re-load idempotent
// params: {"ids": ["example:1", "example:missing"]}
UNWIND $ids AS id
MATCH (i:Image {id: id})
OPTIONAL MATCH (i)-[:HAS]->(o:Object)
OPTIONAL MATCH (o)-[:SUBJ]->(r:Relation)
OPTIONAL MATCH (r)-[:MOD]->(m:RelMod)
WITH i, collect(DISTINCT o) AS objects, collect(DISTINCT r) AS relations, collect(DISTINCT m) AS mods
FOREACH (n IN mods | DETACH DELETE n)
FOREACH (n IN relations | DETACH DELETE n)
FOREACH (n IN objects | DETACH DELETE n)
DETACH DELETE i
RETURN count(*) AS images
