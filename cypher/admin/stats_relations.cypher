// summary: relations per source and split (counted from their subject object's image)
MATCH (i:Image)-[:HAS]->(:Object)-[:SUBJ]->(r:Relation)
RETURN i.source AS source, i.split AS split, count(r) AS relations
