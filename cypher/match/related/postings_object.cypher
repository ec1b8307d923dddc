// summary: ids of the images holding an object with this name (candidate images of a related-image lookup, index-backed on Object.name)
// params: {"name": "man"}
MATCH (i:Image)-[:HAS]->(o:Object {name: $name})
RETURN DISTINCT i.id AS id
