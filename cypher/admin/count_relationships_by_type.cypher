// summary: relationship count per type, for `covr db stats`
MATCH ()-[r]->()
RETURN type(r) AS type, count(r) AS count
ORDER BY type
