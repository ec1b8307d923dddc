// fragment of the related-image match builder (covr.related.cypher_path); placeholders {{name}} take identifiers or rendered fragments
// summary: carries the edit count so far and drops embeddings with too many edits early
WITH {{bound}}, {{total}} AS {{c}}
