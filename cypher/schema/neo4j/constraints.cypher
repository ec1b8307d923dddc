// summary: uniqueness of the natural keys on Neo4j (each constraint brings its own index)
// backend: neo4j
CREATE CONSTRAINT covr_image_id IF NOT EXISTS FOR (n:Image) REQUIRE n.id IS UNIQUE;
CREATE CONSTRAINT covr_object_key IF NOT EXISTS FOR (n:Object) REQUIRE n.key IS UNIQUE;
CREATE CONSTRAINT covr_relation_key IF NOT EXISTS FOR (n:Relation) REQUIRE n.key IS UNIQUE;
CREATE CONSTRAINT covr_relmod_key IF NOT EXISTS FOR (n:RelMod) REQUIRE n.key IS UNIQUE;
CREATE CONSTRAINT covr_meta_key IF NOT EXISTS FOR (n:Meta) REQUIRE n.key IS UNIQUE;
