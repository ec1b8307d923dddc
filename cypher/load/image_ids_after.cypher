// summary: one page of stored Image.id values in id order after a cursor (store digests walk all images with it)
// params: {"after": "", "limit": 500}
MATCH (i:Image)
WHERE i.id > $after
RETURN i.id AS id
ORDER BY id
LIMIT $limit
