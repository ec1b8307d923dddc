"""Batch work on a Ray cluster (issue 17, DESIGN §10, docs/scale.md).

``covr generate --ray`` and ``covr distractors --ray`` split their source images into shards by
a stable hash of the image id (:mod:`covr.scale.shards`), run each shard as a Ray task that opens
its own store connection (:mod:`covr.scale.tasks`), and merge the parts in input order so the
output equals the single-process run's, byte for byte, whatever the number of workers or nodes
(:mod:`covr.scale.generate`, :mod:`covr.scale.distractors`). :mod:`covr.scale.cluster` starts
or joins Ray. The room calls the graph, question and related rooms through their public
functions; the CLI calls it.
"""
