"""One settings reader for the whole service (environment variables ``COVR_*``), and one
frozen section per room.

Every host, port, limit and path the service uses is read here and nowhere else, so that a
deployment is described completely by its environment (or a ``.env`` file). :class:`Settings`
reads and checks every variable; each room takes only its own section, built from it by a
property (``settings.graph``, ``settings.related``...; :data:`SECTIONS`) and defined beside the
room that reads it (``covr/graph/config.py``...). Only entry points read the settings
(``get_settings``: the CLI's commands, the container's health check) and pass the sections
down; ``tests/unit/test_settings_sections.py`` keeps every field in a section and every other
module off this one (docs/architecture.md, "Settings per room").
"""

from __future__ import annotations

import os
from dataclasses import fields
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from covr.graph.config import ENGINE_LOAD_DEFAULTS, GRAPH_URI_ENGINES, BackendName, GraphSettings
from covr.models.config import ModelSettings
from covr.questions.config import QuestionSettings
from covr.related.config import RelatedSettings, parse_thresholds
from covr.scale.config import ScaleSettings, TaskSettings
from covr.scene.limits import SceneLimits
from covr.service.config import ServerSettings, ServiceSettings
from covr.view.config import ViewSettings
from covr_loaders.config import LoadSettings


def _default_data_dir() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "covr"


class Settings(BaseSettings):
    """Service configuration; see ``.env.example`` for every variable with its default."""

    model_config = SettingsConfigDict(
        env_prefix="COVR_", env_file=".env", env_file_encoding="utf-8", extra="ignore"
    )

    graph_uri: str = Field(
        default="",
        description="bolt:// or neo4j:// → Neo4j; falkor://host:port → external FalkorDB; "
        "empty → the embedded FalkorDB server started by the service itself.",
    )
    graph_backend: BackendName = Field(
        default="falkordb",
        description="Which server the project starts itself when COVR_GRAPH_URI is empty: "
        "'falkordb' (the light embedded default) or 'neo4j' (Neo4j Community built by `make "
        "setup`; needs Java 17+). A URI always wins over this choice.",
    )
    graph_user: str = Field(default="neo4j", description="Neo4j user name.")
    graph_password: SecretStr | None = Field(
        default=None, description="Neo4j or external FalkorDB password."
    )
    graph_database: str = Field(default="neo4j", description="Neo4j database name.")
    graph_name: str = Field(
        default="covr",
        pattern=r"^[A-Za-z][A-Za-z0-9_]{0,62}$",
        description="FalkorDB graph key holding the scene graphs.",
    )
    data_dir: Path = Field(
        default_factory=_default_data_dir,
        description="Embedded store: socket, snapshots, lock and logs live here.",
    )
    query_timeout_s: float = Field(
        default=30.0, gt=0, description="Server-side timeout for read queries, in seconds."
    )
    table_timeout_s: float = Field(
        default=300.0,
        gt=0,
        description="Server-side timeout for the whole-table read a related lookup caches per "
        "store generation (every image id and split; grows with the store: 85,000 rows timed out "
        "at 30 s on a loaded 2-core Neo4j). A request's own deadline still bounds it.",
    )
    connect_timeout_s: float = Field(
        default=10.0, gt=0, description="Timeout for opening a connection, in seconds."
    )
    startup_timeout_s: float = Field(
        default=60.0, gt=0, description="How long to wait for the embedded server to answer."
    )
    shutdown_timeout_s: float = Field(
        default=60.0, gt=0, description="How long a clean stop (snapshot first) may take."
    )
    shutdown_save_wait_s: float = Field(
        default=5.0,
        gt=0,
        le=600,
        description="Embedded FalkorDB: how long a stop keeps asking a server that cannot save "
        "its snapshot (full disk) before stopping it without one (said on stderr; acknowledged "
        "writes stay in the append-only file), and how long a server that ignored the stop gets "
        "between SIGTERM and SIGKILL.",
    )
    server_registry: Path | None = Field(
        default=None,
        description="Embedded FalkorDB: a folder where every server this process starts is "
        "recorded (pid, start time, data directory), so a supervisor can stop the servers a "
        "killed process left (the test suite sets it; empty: none).",
    )
    write_batch_size: int = Field(
        default=10_000, ge=1, le=100_000, description="Rows per UNWIND write statement."
    )
    embedded_durability: Literal["always", "everysec", "snapshot"] = Field(
        default="always",
        description="Embedded FalkorDB: 'always' = every write is in the append-only file, "
        "fsynced, before it is acknowledged (survives a crash); 'everysec' = fsync once a "
        "second (a crash may lose the last second); 'snapshot' = snapshots only (a crash loses "
        "everything since the last snapshot).",
    )
    snapshot_schedule: str = Field(
        default="900 1 300 100 60 10000",
        description="Embedded server RDB schedule: pairs of '<seconds> <changes>'.",
    )
    embedded_query_cache: int = Field(
        default=1000,
        ge=1,
        le=100_000,
        description="Embedded server: execution plans cached per graph (FalkorDB CACHE_SIZE; "
        "its default of 25 is far fewer than the distinct statements of a lookup workload).",
    )
    index_wait_s: float = Field(
        default=120.0, gt=0, description="How long schema application waits for indexes."
    )

    # --- managed Neo4j (COVR_GRAPH_BACKEND=neo4j; docs/graph-store.md) ---
    neo4j_bolt_port: int = Field(
        default=7687,
        ge=0,
        le=65535,
        description="Managed Neo4j: Bolt port on 127.0.0.1 (0: a free port at every start).",
    )
    neo4j_heap: str = Field(
        default="1g",
        pattern=r"^[1-9][0-9]*[kmg]$",
        description="Managed Neo4j: JVM heap (-Xms/-Xmx), e.g. 512m, 2g.",
    )
    neo4j_pagecache: str = Field(
        default="1g",
        pattern=r"^[1-9][0-9]*[kmg]$",
        description="Managed Neo4j: page cache size (the store files held in memory); 1g holds "
        "1x GQA (85k images).",
    )
    neo4j_replan_interval_s: int = Field(
        default=1,
        ge=0,
        le=86_400,
        description="Managed Neo4j: seconds before a cached plan whose statistics changed is "
        "planned again (dbms.cypher.min_replan_interval; Neo4j's own default is 10).",
    )
    neo4j_startup_timeout_s: float = Field(
        default=180.0,
        gt=0,
        description="Managed Neo4j: how long a start may take (~12 s on an idle 2-core machine; "
        "a JVM start is slow on a loaded one).",
    )
    neo4j_java: str = Field(
        default="",
        description="Managed Neo4j: the java executable (empty: $JAVA_HOME/bin/java, else java "
        "on PATH).",
    )
    neo4j_launcher_dir: Path | None = Field(
        default=None,
        description="Managed Neo4j: the built launcher module (empty: server/neo4j-launcher of "
        "this checkout).",
    )

    # --- loaders ---
    load_batch_images: int = Field(
        default=5000,
        ge=1,
        le=20_000,
        description="Images per load write statement (one statement = one all-or-nothing batch; "
        "FalkorDB's per-statement commit cost grows with the graph, so fewer larger batches "
        "load faster: docs/loaders.md). Unset on Neo4j: 500 (its cost grows with the size "
        "of a transaction instead: 5,000 took 2.5x the server CPU of 250, measured).",
    )
    load_writers: int = Field(
        default=1,
        ge=1,
        le=16,
        description="Load statements in flight at once. Unset on Neo4j: 2 (each transaction "
        "runs on one core of the server); FalkorDB applies writes one at a time, so 1.",
    )
    load_max_record_bytes: int = Field(
        default=16 << 20,
        ge=1024,
        le=1 << 30,
        description="Largest dataset-file record (one image) read whole, in characters of its "
        "JSON text (bytes for ASCII); a bigger one is skipped as a problem naming this setting, "
        "so a hostile file cannot exhaust memory. Decoding costs about 27x the text: a 64 MiB "
        "record took the loader to 1.8 GB (issue 40), so the default is 16 MiB (the largest "
        "Visual Genome record is below 1 MiB).",
    )

    load_gqa_left_right: bool = Field(
        default=True,
        description="Store GQA's 'to the left of' / 'to the right of' relations (subgraph "
        "enumeration ignores them anyway; off keeps them out of the store).",
    )
    load_imsitu_place: bool = Field(
        default=True,
        description="Turn the imSitu PLACE role into a RelMod 'at' (the reference dropped it).",
    )
    load_imsitu_frame: str = Field(
        default="first",
        pattern=r"^(first|majority)$",
        description="imSitu frame choice: the first annotator frame with both leading roles "
        "filled, or the frame most annotators agree on.",
    )
    load_imsitu_templates: Path | None = Field(
        default=None,
        description="imSitu verb sentence templates (verb<TAB>sentence); empty → the bundled file.",
    )

    # --- limits of a stored scene graph (loaders and ImportSceneGraphs; covr.scene.limits) ---
    limit_id_chars: int = Field(
        default=256,
        ge=16,
        le=256,
        description="Longest image, object, relation or rel-mod id (ids become unique keys; "
        "FalkorDB crashes on a unique value of ~5,000 bytes, which four 256-character ids in "
        "4-byte UTF-8 approach: so it can be lowered, not raised).",
    )
    limit_name_chars: int = Field(
        default=256, ge=16, le=4096, description="Longest name, attribute or relation name."
    )
    limit_objects: int = Field(
        default=10_000, ge=1, le=1_000_000, description="Most objects in one scene graph."
    )
    limit_attributes: int = Field(
        default=256, ge=1, le=100_000, description="Most attributes of one object."
    )
    limit_relations: int = Field(
        default=50_000, ge=1, le=5_000_000, description="Most relations in one scene graph."
    )
    limit_relmods: int = Field(
        default=64, ge=1, le=10_000, description="Most rel-mods (imSitu roles) of one relation."
    )
    limit_split_chars: int = Field(
        default=64,
        ge=8,
        le=256,
        description="Longest split name (listed in every statistics reply: two 9 MiB split "
        "names made GetStatistics fail for every client, issue 40).",
    )

    # --- models (exclusivity and presence classifiers, ONNX) ---
    models_dir: Path | None = Field(
        default=None,
        description="Folder with exclusivity.onnx and presence.onnx; empty → the bundled models.",
    )
    wordnet_dir: Path = Field(
        default=Path("/usr/share/wordnet"),
        description="WordNet 3.0 database files (Debian wordnet-base); copied with a generated "
        "lexnames file into <data_dir>/nltk_data on first use.",
    )
    model_threads: int = Field(
        default=1, ge=1, le=64, description="onnxruntime intra-op threads per model session."
    )

    # --- gRPC service (covr serve; docs/service.md) ---
    service_host: str = Field(
        default="127.0.0.1", description="Address the gRPC server binds (0.0.0.0: all)."
    )
    service_port: int = Field(default=50051, ge=0, le=65535, description="gRPC port (0: any).")
    service_workers: int = Field(
        default=8, ge=1, le=256, description="Threads that run RPC handlers."
    )
    service_max_concurrent_rpcs: int = Field(
        default=32,
        ge=1,
        le=10_000,
        description="RPCs in progress at once; more get RESOURCE_EXHAUSTED instead of queueing.",
    )
    service_max_generations: int = Field(
        default=0,
        ge=0,
        le=1024,
        description="GenerateQuestions calls in progress at once, more get RESOURCE_EXHAUSTED "
        "with a retry hint (0: one per CPU core; each call is seconds of CPU).",
    )
    service_max_lookups: int = Field(
        default=0,
        ge=0,
        le=1024,
        description="FindRelatedImages calls in progress at once, more get RESOURCE_EXHAUSTED "
        "with a retry hint (0: two per CPU core).",
    )
    service_token: SecretStr | None = Field(
        default=None, description="Bearer token every RPC must carry (empty: no auth)."
    )
    service_tls_cert: Path | None = Field(
        default=None, description="PEM certificate chain; with the key, the server speaks TLS."
    )
    service_tls_key: Path | None = Field(default=None, description="PEM private key for TLS.")
    service_insecure: bool = Field(
        default=False,
        description="Allow a bind address other machines can reach without COVR_SERVICE_TOKEN "
        "(warned at start; same as covr serve --insecure).",
    )
    service_metrics_port: int = Field(
        default=0, ge=0, le=65535, description="Prometheus /metrics port (0: metrics off)."
    )
    service_metrics_host: str = Field(
        default="127.0.0.1",
        description="Address /metrics binds (loopback by default, whatever COVR_SERVICE_HOST).",
    )
    service_metrics_auth: bool = Field(
        default=False,
        description="Require COVR_SERVICE_TOKEN as a bearer token on /metrics scrapes.",
    )
    service_keepalive_time_s: float = Field(
        default=60.0, gt=0, description="Server keepalive ping interval on idle connections."
    )
    service_keepalive_timeout_s: float = Field(
        default=20.0, gt=0, description="How long the server waits for a keepalive ack."
    )
    service_min_ping_interval_s: float = Field(
        default=30.0,
        gt=0,
        description="Shortest client keepalive interval the server accepts (the SDK pings every "
        "60 s; faster clients get GOAWAY too_many_pings).",
    )
    service_grace_s: float = Field(
        default=10.0, ge=0, description="On SIGTERM, how long running RPCs may finish."
    )
    service_max_message_mb: int = Field(
        default=16, ge=1, le=1024, description="Largest request or response message (MiB)."
    )
    service_import_max_record_bytes: int = Field(
        default=8 << 20,
        ge=1024,
        le=1 << 30,
        description="Largest ImportSceneGraphs message (one scene graph, bytes on the wire); a "
        "bigger one is a problem naming this setting (strict: nothing is written), not converted. "
        "Above COVR_SERVICE_MAX_MESSAGE_MB gRPC refuses the whole stream first.",
    )
    service_import_max_bytes: int = Field(
        default=64 << 20,
        ge=1 << 16,
        le=1 << 34,
        description="Bytes (on the wire) of the scene graphs one ImportSceneGraphs call holds in "
        "memory: a strict import holds its whole stream and is refused with INVALID_ARGUMENT "
        "naming this setting beyond it (nothing written); a non-strict one writes its pending "
        "batch early when it reaches it.",
    )
    service_page_size: int = Field(
        default=100, ge=1, le=10_000, description="Default page size of streaming RPCs."
    )
    service_max_page_size: int = Field(
        default=1000, ge=1, le=100_000, description="Largest page size a request may ask for."
    )
    service_max_subgraphs: int = Field(
        default=200, ge=1, le=100_000, description="Default and cap of subgraphs per image."
    )
    service_max_evaluate_examples: int = Field(
        default=500_000,
        ge=1,
        le=10_000_000,
        description="Examples of one kind (gold, train, iid) an Evaluate request may send.",
    )
    service_log_requests: bool = Field(
        default=True, description="Log one line per RPC (method, code, duration, peer)."
    )

    # --- subgraphs and related images (docs/related.md, docs/subgraphs.md §4) ---
    subgraph_ignored_nouns: str = Field(
        default="head,snow,ground,sky,road,grass,field,wall,sidewalk,street",
        description="Comma-separated nouns never used in subgraphs (reference generator's list).",
    )
    subgraph_ignored_relations: str = Field(
        default="of,with,to the left of,to the right of",
        description="Comma-separated relations never used in subgraphs.",
    )
    subgraph_ignored_pairs: str = Field(
        default="wearing:shirt,wearing:shoe,wearing:shoes,wearing:sock,wearing:socks,"
        "wearing:pants,wearing:clothes",
        description="Comma-separated relation:noun pairs ignored unless the noun has an attribute.",
    )
    subgraph_min_object_area: float = Field(
        default=400.0, ge=0, description="Objects with a box area <= this (px²) are left out."
    )
    subgraph_max_per_image: int = Field(
        default=1000, ge=1, description="Subgraphs enumerated per image at most (smallest first)."
    )
    related_exclusivity: Literal["model", "resource"] = Field(
        default="model",
        description="Exclusivity scorer of related-image lookups: 'model' (the ONNX classifier, "
        "docs/models.md) or 'resource' (the reviewed word lists; no WordNet needed).",
    )
    related_presence: bool = Field(
        default=True,
        description="Drop candidate distractors in which the presence model finds the subgraph "
        "probably present though unannotated (requests can still switch it off).",
    )
    related_presence_thresholds: str = Field(
        default="",
        description="Per changed node type presence thresholds, e.g. 'object=0.05,relation=0.1,"
        "attribute=0.5' (the paper's values); empty = the model's calibrated thresholds.",
    )
    related_answer_presence: float = Field(
        default=0.5,
        ge=0.0,
        le=1.0,
        description="An image an answer depends on is not used when the presence model scores an "
        "object the question asks for above this, though the image's scene graph has none "
        "(1 = never; body parts beside a person or an animal always count as present).",
    )
    related_per_signature: int = Field(
        default=5, ge=1, le=10_000, description="Default distractors per edit signature."
    )
    related_positives: int = Field(
        default=5, ge=1, le=10_000, description="Default number of positive images returned."
    )
    related_batch_min: int = Field(
        default=8,
        ge=1,
        le=100_000,
        description="Candidate images verified per signature in a lookup's first round "
        "(rounds grow 4x).",
    )
    related_batch_max: int = Field(
        default=4096, ge=1, le=1_000_000, description="Largest candidate batch of one branch."
    )
    related_list_max: int = Field(
        default=400,
        ge=0,
        le=100_000,
        description="Longest name list passed as a query prefilter; longer ones are checked "
        "in Python only.",
    )
    related_direct_min_pool: int = Field(
        default=256,
        ge=0,
        description="After the first sampled round, a signature with more candidates left than "
        "this is matched directly from its rarest name's index instead.",
    )
    related_direct_max_nodes: int = Field(
        default=2000,
        ge=0,
        description="When sampling, a direct match is only started from a name with at most "
        "this many nodes (0: no limit).",
    )
    related_postings_max_images: int = Field(
        default=5000,
        ge=0,
        description="Candidate image lists are only fetched for names in at most this many "
        "images (0: no limit); commoner names leave the pool wider.",
    )
    related_scan_budget: int = Field(
        default=256,
        ge=0,
        description="When sampling, candidate images verified per lookup at most (0: no limit); "
        "a rare signature may then return fewer than its cap.",
    )
    related_combined_min_signatures: int = Field(
        default=8,
        ge=0,
        description="Lookups with more edit signatures than this verify candidates with one "
        "combined query per round instead of one branch per signature.",
    )
    related_scene_batch: int = Field(
        default=200,
        ge=1,
        le=10_000,
        description="Image ids per batched scene-graph read (longer lists are chunked).",
    )

    # --- question generation (covr generate; docs/questions.md) ---
    questions_subgraphs_per_image: int = Field(
        default=24,
        ge=1,
        description="Subgraphs per source image questions are asked about (a "
        "seeded sample of the enumerated ones).",
    )
    questions_max_distance: int = Field(
        default=2, ge=1, le=2, description="Largest edit distance of distractor images."
    )
    questions_per_signature: int = Field(
        default=3, ge=1, le=100, description="Distractor images kept per edit signature."
    )
    questions_positives: int = Field(
        default=6, ge=1, le=100, description="Other images containing the subgraph looked up."
    )
    questions_max_checks: int = Field(
        default=60,
        ge=1,
        le=100_000,
        description="Candidate images verified per subgraph by the in-memory distractor sampler.",
    )
    questions_flip_attempts: int = Field(
        default=4, ge=0, le=50, description="Extra image sets tried for a second, different answer."
    )
    questions_max_combos: int = Field(
        default=8,
        ge=1,
        le=1000,
        description="Closed-class fillings (numbers, quantifiers) tried per question text.",
    )
    questions_workers: int = Field(
        default=1, ge=1, le=256, description="Worker processes of covr generate by default."
    )
    # -- covr render / covr view (issue 18; docs/view.md) --
    images_dir: Path | None = Field(
        default=None,
        description="Folder of the photos drawn under the boxes (<source>/<id>.jpg or <id>.jpg); "
        "unset: a neutral canvas.",
    )
    view_host: str = Field(
        default="127.0.0.1",
        description="Address covr view listens on (local only by default: it has no auth).",
    )
    view_port: int = Field(
        default=8765, ge=0, le=65535, description="Port of covr view (0: any free port)."
    )
    view_page_size: int = Field(
        default=25, ge=1, le=500, description="Examples per page in covr view."
    )
    view_token: SecretStr | None = Field(
        default=None,
        description="Password of covr view (any user name; or Authorization: Bearer); needed "
        "to listen on an address other machines can reach (empty: no auth).",
    )
    view_insecure: bool = Field(
        default=False,
        description="Allow covr view on an address other machines can reach without "
        "COVR_VIEW_TOKEN (warned at start; same as covr view --insecure).",
    )
    view_threads: int = Field(
        default=16,
        ge=1,
        le=256,
        description="Connections covr view handles at once; up to 4 times as many more wait, "
        "beyond that a connection gets 503.",
    )
    view_idle_timeout_s: float = Field(
        default=20.0,
        gt=0,
        le=3600,
        description="Seconds covr view waits for a connection's request (or the client to "
        "read) before closing it.",
    )
    # -- memory: the entries the model and related-lookup caches keep (COVR_MODEL_CACHE_*,
    # COVR_RELATED_CACHE_*; docs/service.md, "Memory"): every cache is bounded by entries, each
    # field says roughly how large an entry is --
    model_cache_pairs: int = Field(
        default=16_000_000,
        ge=1000,
        description="Exclusivity scores kept per process (4 bytes each, in one row per queried "
        "name: a 4,000-name vocabulary fits whole); the oldest rows are dropped beyond this, so a "
        "long-running service's memory stays bounded.",
    )
    model_cache_terms: int = Field(
        default=200_000,
        ge=1,
        le=10_000_000,
        description="Checked normal forms of terms kept per process (LRU): serving sees the same "
        "dataset names over and over.",
    )
    related_cache_results: int = Field(
        default=4096, ge=0, description="Related-image results kept in the lookup's LRU cache."
    )
    related_cache_decisions: int = Field(
        default=1_000_000,
        ge=1,
        description="Exclusivity decisions (node pair -> exclusive?) a lookup keeps; past it the "
        "table starts over (each entry is a few hundred bytes).",
    )
    related_cache_concretes: int = Field(
        default=200_000,
        ge=1,
        description="Substituted subgraphs (a query with one edit applied) a lookup keeps; past "
        "it the table starts over.",
    )
    related_cache_names: int = Field(
        default=200_000,
        ge=1,
        le=10_000_000,
        description="Names (and name-form sets) whose synonyms and ancestors the word-list "
        "exclusivity keeps; beyond it, it recomputes them.",
    )
    related_cache_postings: int = Field(
        default=4096, ge=0, description="Per-name candidate image lists kept in the LRU cache."
    )
    related_cache_scenes: int = Field(
        default=4096,
        ge=0,
        description="Scene graphs kept in the lookup's LRU cache (presence filter, questions); "
        "dropped when the store's statistics generation changes.",
    )
    # -- batch work on a Ray cluster: covr generate --ray, covr distractors --ray (issue 17,
    # docs/scale.md) --
    ray_shards: int = Field(
        default=16,
        ge=1,
        le=100_000,
        description="Shards the source images are split into (by a stable hash of the image "
        "id); each shard is one Ray task. The output does not depend on it; --resume reuses "
        "parts only of a run with the same number.",
    )
    ray_cpus: int = Field(
        default=0,
        ge=0,
        le=1024,
        description="CPUs of a Ray instance started locally (--ray local); 0: every core.",
    )
    ray_temp_dir: Path | None = Field(
        default=None,
        description="Session files of a locally started Ray (sockets, logs); empty: "
        "<data_dir>/ray when that path is short enough for Unix sockets, else /tmp/covr-ray.",
    )
    ray_object_store_mb: int = Field(
        default=256,
        ge=64,
        le=1 << 20,
        description="Object store of a locally started Ray, MiB (shard results pass through it).",
    )
    ray_max_retries: int = Field(
        default=3,
        ge=0,
        le=100,
        description="Times Ray reruns a shard whose worker process or node died.",
    )
    # -- FindRelatedImagesBatch: flow control and limits of one batch stream, and how many may
    # run at once (docs/service.md, "Batches of related images") --
    service_batch_window: int = Field(
        default=64,
        ge=1,
        le=10_000,
        description="Items of one FindRelatedImagesBatch stream read and not yet answered; the "
        "server reads no further until an answer is sent, so a client that stops reading (or "
        "sends faster than the lookups run) is held back by gRPC's flow control.",
    )
    service_batch_workers: int = Field(
        default=2,
        ge=1,
        le=64,
        description="Lookups of one batch stream running at once (answers still go out in "
        "request order).",
    )
    service_batch_max_items: int = Field(
        default=1_000_000,
        ge=1,
        le=1_000_000_000,
        description="Items one batch stream may send; the item after the last allowed one ends "
        "the stream with INVALID_ARGUMENT naming the requests field (earlier answers are sent).",
    )
    service_max_batches: int = Field(
        default=0,
        ge=0,
        le=1024,
        description="FindRelatedImagesBatch streams in progress at once, more get "
        "RESOURCE_EXHAUSTED with a retry hint (0: one per CPU core).",
    )

    # -- the sections: what each room takes (SECTIONS; docs/architecture.md) --

    def _pick(self, name: str) -> dict[str, Any]:
        """The values of section ``name``'s fields that are settings fields (its other fields
        are sections of their own, which the property passes)."""
        cls, prefix = SECTIONS[name]
        names = type(self).model_fields
        return {
            f.name: getattr(self, prefix + f.name) for f in fields(cls) if prefix + f.name in names
        }

    @property
    def graph(self) -> GraphSettings:
        """The graph room's section (``covr.graph``: the store and its servers)."""
        return GraphSettings(**self._pick("graph"))

    @property
    def limits(self) -> SceneLimits:
        """The largest stored scene graph (``COVR_LIMIT_*``: loads and ImportSceneGraphs)."""
        return SceneLimits(**self._pick("limits"))

    @property
    def load(self) -> LoadSettings:
        """The loaders' section, with the scene limits a load applies."""
        return LoadSettings(**self._pick("load"), limits=self.limits)

    @property
    def models(self) -> ModelSettings:
        """The models room's section (classifier files, WordNet, threads, score caches)."""
        return ModelSettings(**self._pick("models"))

    @property
    def related(self) -> RelatedSettings:
        """The related room's section (enumeration, lookups, their filters and caches)."""
        return RelatedSettings(**self._pick("related"))

    @property
    def questions(self) -> QuestionSettings:
        """The question room's section (``covr generate`` and GenerateQuestions)."""
        return QuestionSettings(**self._pick("questions"))

    @property
    def view(self) -> ViewSettings:
        """The view room's section (``covr render``, ``covr view``)."""
        return ViewSettings(**self._pick("view"))

    @property
    def scale(self) -> ScaleSettings:
        """The scale room's section (Ray)."""
        return ScaleSettings(**self._pick("scale"))

    @property
    def service(self) -> ServiceSettings:
        """The gRPC service's own section."""
        return ServiceSettings(**self._pick("service"))

    @property
    def server(self) -> ServerSettings:
        """The sections a gRPC server is built with (``covr serve``)."""
        return ServerSettings(
            service=self.service,
            graph=self.graph,
            load=self.load,
            related=self.related,
            models=self.models,
            questions=self.questions,
        )

    @property
    def tasks(self) -> TaskSettings:
        """The sections a batch run and its shard tasks are given (``--ray``)."""
        return TaskSettings(
            scale=self.scale,
            graph=self.graph,
            related=self.related,
            models=self.models,
            questions=self.questions,
        )

    @field_validator("data_dir")
    @classmethod
    def _check_data_dir(cls, value: Path) -> Path:
        # A file here (or on the way to it) failed with a traceback at the first mkdir, after
        # the command had started (issue 40 row 9): say so when the setting is read.
        for path in (value, *value.parents):
            if path.exists():
                if not path.is_dir():
                    where = "" if path == value else f" ({path} is a file)"
                    raise ValueError(f"{value} is not a directory{where}")
                break
        return value

    @field_validator("graph_uri")
    @classmethod
    def _check_uri(cls, value: str) -> str:
        value = value.strip()
        if not value:
            return value
        scheme = urlsplit(value).scheme.lower()
        if scheme not in GRAPH_URI_ENGINES:
            raise ValueError(
                f"COVR_GRAPH_URI scheme {scheme!r} is not supported; use bolt://, neo4j:// "
                "(Neo4j), falkor://host:port (FalkorDB) or leave it empty (embedded)"
            )
        return value

    @field_validator("related_presence_thresholds")
    @classmethod
    def _check_thresholds(cls, value: str) -> str:
        parse_thresholds(value)
        return value

    @field_validator("server_registry", mode="before")
    @classmethod
    def _empty_registry(cls, value: object) -> object:
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator("snapshot_schedule")
    @classmethod
    def _check_schedule(cls, value: str) -> str:
        parts = value.split()
        if not parts or len(parts) % 2 or not all(p.isdigit() for p in parts):
            raise ValueError(
                "COVR_SNAPSHOT_SCHEDULE must be pairs of integers '<seconds> <changes>'"
            )
        return value

    @model_validator(mode="after")
    def _engine_load_defaults(self) -> Settings:
        """The selected engine's load defaults (Neo4j: small transactions, two at a time;
        docs/graph-store.md), for those not set."""
        scheme = urlsplit(self.graph_uri).scheme.lower()
        engine = GRAPH_URI_ENGINES[scheme] if self.graph_uri else self.graph_backend
        for name, value in ENGINE_LOAD_DEFAULTS.get(engine, {}).items():
            if name not in self.model_fields_set:
                setattr(self, name, value)
        return self


SECTIONS: dict[str, tuple[type[Any], str]] = {
    "graph": (GraphSettings, ""),
    "load": (LoadSettings, ""),
    "limits": (SceneLimits, "limit_"),
    "models": (ModelSettings, ""),
    "related": (RelatedSettings, ""),
    "questions": (QuestionSettings, ""),
    "view": (ViewSettings, ""),
    "scale": (ScaleSettings, ""),
    "service": (ServiceSettings, ""),
}
"""Each room's section: its :class:`Settings` property, its type, and the prefix its fields'
names lack (``SceneLimits.id_chars`` is ``limit_id_chars``; the others keep the settings' own
names, so a variable is found by one grep)."""

SHARED_FIELDS: dict[str, tuple[str, ...]] = {
    # The process's data folder: the embedded store's files, the load checkpoints (loads/),
    # what the models learned (nltk_data/, models/) and a local Ray's session files (ray/).
    "data_dir": ("graph", "load", "models", "scale"),
    # How long opening a connection may take: to the store, and to a Ray cluster's head.
    "connect_timeout_s": ("graph", "scale"),
}
"""The fields read by more than one section, and by which (every other field is in exactly
one: tests/unit/test_settings_sections.py)."""


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process-wide settings, read once from the environment."""
    return Settings()
