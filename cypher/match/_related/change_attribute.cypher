// fragment of the related-image match builder (covr.related.cypher_path); placeholders {{name}} take identifiers or rendered fragments
// summary: 1 when an object lacks the original attribute, 0 when it has it or the subgraph's object has none ($free; counts the edits)
CASE WHEN ${{free}} OR ${{p}} IN {{v}}.attributes THEN 0 ELSE 1 END
