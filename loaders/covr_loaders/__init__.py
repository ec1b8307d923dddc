"""Batch loaders: GQA, imSitu and Visual Genome files → domain scene graphs → the graph store.

Readers (``gqa``, ``imsitu``, ``vg``) stream a file and yield :class:`covr.scene.SceneGraph`
values or :class:`covr_loaders.errors.Problem` reports; the pipeline (``writer``) validates,
batches and writes them idempotently and resumably.
"""
