// summary: images per source and split
MATCH (i:Image)
RETURN i.source AS source, i.split AS split, count(i) AS images
