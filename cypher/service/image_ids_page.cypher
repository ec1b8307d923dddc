// summary: one page of stored image ids in id order after a cursor, optionally of one source and/or split (ListImages RPC)
// params: {"source": "gqa", "split": null, "after": "", "limit": 100}
MATCH (i:Image)
WHERE ($source IS NULL OR i.source = $source)
  AND ($split IS NULL OR i.split = $split)
  AND i.id > $after
RETURN i.id AS id
ORDER BY id
LIMIT $limit
