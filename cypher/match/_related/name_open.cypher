// fragment of the related-image match builder (covr.related.cypher_path); placeholders {{name}} take identifiers or rendered fragments
// summary: one position's name under its rule, whatever the rule: names in $in pass; when $open, so does any name outside $out (covr.related.cypher_path.MEMBERSHIP; the text never depends on the rule)
({{v}}.name IN ${{inc}} OR (${{open}} AND NOT {{v}}.name IN ${{exc}}))
