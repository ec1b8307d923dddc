// summary: name indexes of the graph model on Neo4j
// backend: neo4j
CREATE INDEX covr_image_source IF NOT EXISTS FOR (n:Image) ON (n.source);
CREATE INDEX covr_object_name IF NOT EXISTS FOR (n:Object) ON (n.name);
CREATE INDEX covr_relation_name IF NOT EXISTS FOR (n:Relation) ON (n.name);
CREATE INDEX covr_relmod_name IF NOT EXISTS FOR (n:RelMod) ON (n.name);
