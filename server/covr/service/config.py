"""The service's settings section (``COVR_SERVICE_*``; docs/service.md) and the sections a
server is built with.

Read by the one settings reader (:class:`covr.settings.Settings`, whose ``service`` and
``server`` properties build these); ``covr serve`` passes :class:`ServerSettings` to
:func:`covr.service.server.build_server`, which hands each room its own section.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pydantic import SecretStr

from covr.graph.config import GraphSettings
from covr.models.config import ModelSettings
from covr.questions.config import QuestionSettings
from covr.related.config import RelatedSettings
from covr_loaders.config import LoadSettings


@dataclass(frozen=True, kw_only=True)
class ServiceSettings:
    """Each field is the :class:`covr.settings.Settings` field of the same name, described
    there."""

    service_host: str
    service_port: int
    service_workers: int
    service_max_concurrent_rpcs: int
    service_max_generations: int
    service_max_lookups: int
    service_token: SecretStr | None
    service_tls_cert: Path | None
    service_tls_key: Path | None
    service_insecure: bool
    service_metrics_port: int
    service_metrics_host: str
    service_metrics_auth: bool
    service_keepalive_time_s: float
    service_keepalive_timeout_s: float
    service_min_ping_interval_s: float
    service_grace_s: float
    service_max_message_mb: int
    service_import_max_record_bytes: int
    service_import_max_bytes: int
    service_page_size: int
    service_max_page_size: int
    service_max_subgraphs: int
    service_max_evaluate_examples: int
    service_log_requests: bool
    service_batch_window: int
    service_batch_workers: int
    service_batch_max_items: int
    service_max_batches: int


@dataclass(frozen=True, kw_only=True)
class ServerSettings:
    """What one server is built with: its own section and those of the rooms it opens (the
    service is the one place that holds every room: DESIGN.md §1). Each module of the service
    takes the sections it reads from here: the store's query timeout caps every deadline
    (``graph``), ImportSceneGraphs writes as ``covr load`` does (``load``, with its scene
    limits), the lookups and the question engine are opened with ``related``, ``models`` and
    ``questions``."""

    service: ServiceSettings
    graph: GraphSettings
    load: LoadSettings
    related: RelatedSettings
    models: ModelSettings
    questions: QuestionSettings
