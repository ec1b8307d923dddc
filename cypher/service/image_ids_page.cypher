// summary: one page of stored image ids in id order after a cursor, optionally of one source and/or split (ListImages RPC); the cursor is compared as in load/image_ids_after, whose summary says why (FalkorDB's index-backed string ranges and Neo4j's mixed string orders both made pages skip ids)
// params: {"source": "gqa", "split": null, "after": "", "limit": 100}
MATCH (i:Image)
WHERE ($source IS NULL OR i.source = $source)
  AND ($split IS NULL OR i.split = $split)
WITH i.id + left($after, 0) AS id
WHERE id > $after
RETURN id
ORDER BY id
LIMIT $limit
