// summary: writes name statistics from rows [type, split, name, images, nodes] computed in Python (run stats/clear first); one statement for all rows
// params: {"rows": [["object", "val", "man", 2, 3], ["attribute", "val", "red", 1, 1]]}
UNWIND $rows AS row
CREATE (s:NameStat)
SET s.type = row[0], s.split = row[1], s.name = row[2], s.images = row[3], s.nodes = row[4]
