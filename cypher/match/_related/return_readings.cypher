// fragment of the related-image match builder (covr.related.cypher_path); placeholders {{name}} take identifiers or rendered fragments
// summary: an image-walk branch returns one row per image: its distinct readings, each the values at the positions the caller reads, in position order (unread items are nulls and are left out)
RETURN i.id AS image_id, ${{tag}} AS tag, collect(DISTINCT [covr_x IN [{{items}}] WHERE covr_x IS NOT NULL]) AS readings
