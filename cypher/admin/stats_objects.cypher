// summary: objects and attribute values per source and split
MATCH (i:Image)-[:HAS]->(o:Object)
RETURN i.source AS source, i.split AS split, count(o) AS objects,
       toInteger(sum(size(coalesce(o.attributes, [])))) AS attributes
