// summary: the schema version recorded by set_version (no row when the schema was never applied)
// params: {"key": "schema"}
MATCH (m:Meta {key: $key})
RETURN m.version AS version
