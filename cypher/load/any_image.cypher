// summary: one row if the store holds any image, none if it holds none (quick start loads the samples only into an empty store); the row names no image, since LIMIT without ORDER BY picks an arbitrary one and the two backends pick different ones
MATCH (i:Image)
WITH i LIMIT 1
RETURN true AS found
