// summary: one image id if the store holds any image (quick start loads the samples only into an empty store)
MATCH (i:Image)
RETURN i.id AS id
LIMIT 1
