// summary: every stored name statistic row (type, split, name, images, nodes); the loaders add a load's counts to it instead of recounting the whole graph (covr.graph.name_stats.add_counts)
// params: {}
MATCH (s:NameStat)
RETURN s.type AS type, s.split AS split, s.name AS name, s.images AS images, s.nodes AS nodes
