"""The in-memory domain model (DESIGN.md §1): scene graphs and their parts; imports no other room."""

from covr.scene.model import (
    Box,
    Object,
    Relation,
    RelMod,
    SceneGraph,
    SceneGraphError,
    canonical,
    image_key,
    validate,
)

__all__ = [
    "Box",
    "Object",
    "RelMod",
    "Relation",
    "SceneGraph",
    "SceneGraphError",
    "canonical",
    "image_key",
    "validate",
]
