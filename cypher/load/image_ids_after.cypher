// summary: one page of stored Image.id values in id order after a cursor (store digests walk all images with it). The cursor is compared with the id as a computed string (`+ left($after, 0)` appends nothing), never as the stored property, because of two engine faults (docs/graph-store.md, cypher-portable notes): FalkorDB 4.16 answers an index-backed range on a string property wrongly for non-ASCII strings (`i.id > $after` skipped ids with a character above U+007F), and Neo4j 5 compares strings in UTF-16 order in expressions but in code point order in its index and in sorts of stored values (a page after an id with a character in U+E000-U+FFFF skipped ids with one above U+FFFF, with or without an index seek). So both engines scan the label; the order is code point order on FalkorDB and UTF-16 order on Neo4j, which differ only for ids that mix those two ranges
// params: {"after": "", "limit": 500}
MATCH (i:Image)
WITH i.id + left($after, 0) AS id
WHERE id > $after
RETURN id
ORDER BY id
LIMIT $limit
