// summary: records the schema version the store was prepared with
// params: {"key": "schema", "version": 1}
MERGE (m:Meta {key: $key})
SET m.version = $version
RETURN m.version AS version
