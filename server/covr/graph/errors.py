"""Exceptions raised by the graph room; every other room sees only these, never a driver's own."""

from __future__ import annotations


class GraphError(Exception):
    """Base class of every graph-store failure."""


class StoreUnavailable(GraphError):
    """The store cannot be reached (server down, socket gone, authentication refused)."""


class DataDirLocked(GraphError):
    """Another process owns the embedded server of this data directory."""


class QueryError(GraphError):
    """The server rejected a statement; the message carries the server's own words."""

    def __init__(self, statement: str, server_message: str) -> None:
        super().__init__(f"{statement}: {server_message}")
        self.statement = statement
        self.server_message = server_message


class QueryTimeout(QueryError):
    """A statement ran past its timeout and was stopped by the server."""


class ParameterError(GraphError, ValueError):
    """A parameter value cannot be sent safely (wrong type, NUL byte, NaN, out-of-range int)."""


class SchemaError(GraphError):
    """Schema application failed or indexes did not become usable in time."""
