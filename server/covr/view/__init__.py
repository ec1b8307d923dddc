"""Seeing the data (DESIGN.md §1, issue 18): drawings of scene graphs and examples, and a browser.

This room reads scene graphs, examples and related-image results only through the public
functions of ``covr.scene``, ``covr.questions`` and ``covr.related``; it never holds a database
driver. Callers hand it a *scene lookup* (image id -> :class:`~covr.scene.model.SceneGraph`),
which the CLI builds from the configured store.
"""
