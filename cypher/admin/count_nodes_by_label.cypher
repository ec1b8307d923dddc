// summary: node count per label (first label of each node), for `covr db stats`
MATCH (n)
RETURN labels(n)[0] AS label, count(n) AS count
ORDER BY label
