// summary: removes every (:NameStat) node before the name statistics are recomputed (covr.graph.name_stats.refresh)
// params: {}
MATCH (s:NameStat)
DETACH DELETE s
