// summary: load benchmark baseline: one Image per statement
// params: {"props": {"id": "bench:1", "source": "bench", "split": "val"}}
CREATE (i:Image)
SET i = $props
