"""Errors of the models room: bad caller input versus a broken or missing model resource."""

from __future__ import annotations


class ModelInputError(ValueError):
    """A caller gave a term, type or vector the models cannot score; ``field`` names it."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


class ModelResourceError(RuntimeError):
    """A model file, its metadata or WordNet is missing or unreadable (names the path)."""
