// summary: every image id with its split: the table related-image lookups draw seeded candidate orders from
// params: {}
MATCH (i:Image)
RETURN i.id AS id, i.split AS split
