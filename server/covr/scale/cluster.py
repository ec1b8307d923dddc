"""Starting or joining Ray, and running shard tasks on it.

``local`` starts a Ray instance in this process's lifetime (a laptop is a cluster of one):
``COVR_RAY_CPUS`` CPUs, a small object store, session files under ``COVR_RAY_TEMP_DIR``, bound to
the loopback address. ``auto`` joins the cluster this machine is a node of (``ray start``);
``HOST:PORT`` joins a cluster's head; ``ray://HOST:PORT`` connects through Ray Client. Ray is
imported only here and only when a command asks for it (it takes seconds to import).

A finished shard is handed to ``on_done`` as soon as it arrives (the driver writes its part at
once, so an interrupted run keeps it). Ray reruns a task whose worker process or node died
(``COVR_RAY_MAX_RETRIES``); a task that raises is not rerun: generation is deterministic, it
would raise again.
"""

from __future__ import annotations

import logging
import os
import socket
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from covr.errors import CovrError
from covr.scale.config import ScaleSettings
from covr.scale.errors import ScaleError
from covr.scale.tasks import Job, ShardResult

LOCAL = "local"
AUTO = "auto"
# AF_UNIX paths are at most 107 bytes; Ray puts sockets ~60 bytes below its temp dir
_MAX_TEMP_DIR = 45


class ShardFailed(RuntimeError):
    """A shard could not be finished (its worker died more often than the retries allow, or the
    task hit an error that is not bad input)."""


def temp_dir(settings: ScaleSettings) -> Path:
    """Where a locally started Ray keeps its session files."""
    if settings.ray_temp_dir is not None:
        return settings.ray_temp_dir.expanduser().resolve()
    under_data = settings.data_dir.expanduser().resolve() / "ray"
    if len(str(under_data)) <= _MAX_TEMP_DIR:
        return under_data
    return Path("/tmp") / f"covr-ray-{os.getuid()}"  # noqa: S108 - Ray needs a short socket dir


def check_address(address: str, timeout: float) -> None:
    """Fail fast (ScaleError) for an address nothing listens on: Ray itself retries for
    minutes before it gives up."""
    if address in (LOCAL, AUTO):
        return
    target = address if "://" in address else f"ray://{address}"
    parts = urlsplit(target)
    if parts.scheme != "ray" or not parts.hostname or parts.port is None:
        raise ScaleError(
            "ray", f"expected local, auto, HOST:PORT or ray://HOST:PORT, got {address!r}"
        )
    try:
        with socket.create_connection((parts.hostname, parts.port), timeout=timeout):
            pass
    except OSError as exc:
        raise ScaleError("ray", f"no Ray cluster answers at {address!r}: {exc}") from None


def _quiet() -> None:
    """No usage statistics sent anywhere, no banner, and Ray's warnings only when they matter."""
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    for name in ("ray", "ray._private.authentication"):
        logging.getLogger(name).setLevel(logging.ERROR)


@contextmanager
def connected(address: str, settings: ScaleSettings) -> Iterator[None]:
    """Ray started (``local``) or joined for the duration of the block; shut down after."""
    check_address(address, settings.connect_timeout_s)
    _quiet()
    if address != LOCAL and os.environ.get("RAY_AUTH_MODE") is None and _token_available():
        os.environ["RAY_AUTH_MODE"] = "token"  # a cluster of `ray start`; read when Ray loads
    import ray

    common: dict[str, Any] = {
        "logging_level": logging.ERROR,
        "log_to_driver": False,
        "include_dashboard": False,
    }
    try:
        if address == LOCAL:
            directory = temp_dir(settings)
            directory.mkdir(parents=True, exist_ok=True)
            ray.init(
                address="local",  # a new instance even when RAY_ADDRESS names a cluster
                num_cpus=settings.ray_cpus or os.cpu_count() or 1,
                object_store_memory=settings.ray_object_store_mb << 20,
                _temp_dir=str(directory),
                _node_ip_address="127.0.0.1",
                **common,
            )
        else:
            ray.init(address=address, **common)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        raise ScaleError("ray", f"cannot start or join Ray at {address!r}: {exc}") from None
    try:
        yield
    finally:
        ray.shutdown()


def _token_available() -> bool:
    """Whether this machine holds a Ray token (``ray start`` writes ~/.ray/auth_token)."""
    return bool(os.environ.get("RAY_AUTH_TOKEN")) or (Path.home() / ".ray" / "auth_token").is_file()


def run_shards(
    task: Callable[[Job, int, Sequence[str]], ShardResult],
    job: Job,
    shards: Sequence[tuple[int, Sequence[str]]],
    settings: ScaleSettings,
    on_done: Callable[[ShardResult], None],
) -> Counter[str]:
    """Run ``task`` for every ``(shard, image ids)`` on the connected cluster; return how many
    shards each node finished."""
    import ray
    from ray.exceptions import RayError, RayTaskError

    remote = ray.remote(num_cpus=1, max_retries=settings.ray_max_retries)(_on_node)
    job_ref = ray.put(job)
    pending = {remote.remote(task, job_ref, k, list(ids)): k for k, ids in shards}
    per_node: Counter[str] = Counter()
    try:
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1)
            for ref in done:
                shard = pending.pop(ref)
                try:
                    result: ShardResult = ray.get(ref)
                except RayTaskError as exc:
                    cause = exc.cause
                    if isinstance(cause, CovrError):
                        raise ScaleError(f"shard {shard}", str(cause)) from None
                    raise ShardFailed(f"shard {shard} failed: {cause!r}") from None
                except RayError as exc:
                    raise ShardFailed(f"shard {shard} failed: {exc}") from None
                per_node[result.node] += 1
                on_done(result)
    finally:
        for ref in pending:
            ray.cancel(ref, force=True)
    return per_node


def _on_node(
    task: Callable[[Job, int, Sequence[str]], ShardResult],
    job: Job,
    shard: int,
    image_ids: Sequence[str],
) -> ShardResult:
    """The task body on a worker: run the shard and say which node ran it."""
    import ray

    result = task(job, shard, image_ids)
    node = ray.get_runtime_context().get_node_id()
    return ShardResult(result.shard, result.data, result.images, node, result.pid)
