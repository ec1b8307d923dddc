// fragment of the related-image match builder (covr.related.cypher_path); placeholders {{name}} take identifiers or rendered fragments
// summary: one object's attribute position under its rule: passes when $free (the subgraph's object has no attribute), else some attribute is in $in, or (when $open) outside $out (covr.related.cypher_path.MEMBERSHIP)
(${{free}} OR any(a IN {{v}}.attributes WHERE a IN ${{inc}} OR (${{open}} AND NOT a IN ${{exc}})))
