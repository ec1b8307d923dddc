// summary: the number of images in the store (the name statistics record it with their generation)
// params: {}
MATCH (i:Image)
RETURN count(i) AS images
