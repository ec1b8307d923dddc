// summary: range indexes of the graph model (DESIGN.md §2) on FalkorDB; a repeat answers "already indexed"
// backend: falkordb
CREATE INDEX FOR (n:Image) ON (n.id);
CREATE INDEX FOR (n:Image) ON (n.source);
CREATE INDEX FOR (n:Object) ON (n.key);
CREATE INDEX FOR (n:Object) ON (n.name);
CREATE INDEX FOR (n:Relation) ON (n.key);
CREATE INDEX FOR (n:Relation) ON (n.name);
CREATE INDEX FOR (n:RelMod) ON (n.key);
CREATE INDEX FOR (n:RelMod) ON (n.name);
CREATE INDEX FOR (n:Meta) ON (n.key);
