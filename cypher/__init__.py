"""Every Cypher statement the service runs lives in this folder as a ``.cypher`` file.

This file only makes the folder an installable resource package (``covr_cypher``); the code that
reads the files is ``covr.graph.catalog`` (``catalog.get("admin/ping")`` returns
``cypher/admin/ping.cypher``). No Python belongs here.
"""
