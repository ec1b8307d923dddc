"""Errors of the models room: bad caller input versus a broken or missing model resource."""

from __future__ import annotations

from covr.errors import CovrError


class ModelInputError(CovrError):
    """A caller gave a term, type or vector the models cannot score; ``field`` names it."""


class ModelResourceError(RuntimeError):
    """A model file, its metadata or WordNet is missing or unreadable (names the path)."""
