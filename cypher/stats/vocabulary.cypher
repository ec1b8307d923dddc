// summary: every name of one node type with its image and node counts, over all splits ($split null) or one split
// params: {"type": "object", "split": null}
MATCH (s:NameStat)
WHERE s.type = $type AND ($split IS NULL OR s.split = $split)
RETURN s.name AS name, toInteger(sum(s.images)) AS images, toInteger(sum(s.nodes)) AS nodes
