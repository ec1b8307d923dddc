"""Soak of loads and imports with bad records and kill -9 of the store (issue 40, acceptance).

"A soak of mixed load + imports with injected bad records and kill -9 of the store (both
backends): no stored image lost, every acknowledged write present, server RSS bounded."

Setup: a fresh ``COVR_DATA_DIR`` and a real ``covr serve`` on loopback, which starts and owns the
store (``--backend falkordb``: the embedded FalkorDB; ``neo4j``: the managed Neo4j).

Each round, until ``--minutes`` have passed:

- ``covr load gqa`` (a real process, attached to the served store) of a GQA-format file of
  ``--images`` new synthetic scene graphs (:mod:`covr_loaders.synthetic`) plus new versions of up
  to ``--replace`` images stored by earlier loads (every object renamed: a replacement); every
  ``--bad-every``-th file also holds the issue's bad records in turn: object keys ``"1"`` and
  ``" 1"``, ids whose ``:``-derived keys collide (image ``k:x`` object ``c`` beside image ``k``
  object ``x:c``), ``"width": 1e19``;
- at the same time, ImportSceneGraphs streams through the service (non-strict, four scene graphs
  each: new ones, new versions of earlier imports, and every other stream one bad scene graph of
  the same three kinds), one after another until the load ends;
- every ``--kill-every`` seconds, while both write, SIGKILL of the store server (its pid from
  ``server.json`` in the data directory; the service restarts it on its next call).

After each round (once the service answers again) the check: every image whose last write was
acknowledged (a load that exited 0 and named no problem for it; an import whose answer wrote
every good scene graph) is stored with exactly that scene graph; an image whose write was not
acknowledged (killed, refused) is its previous version or the new one, never missing; no image
ever seen stored has disappeared; no bad record is stored under a good image's id. The images of
this round and ``--sample`` older ones are read back each round, and every one at the end.
The VmRSS of the store process (whichever pid ``server.json`` names) and of ``covr serve`` is
sampled every 0.5 s: min / median / max, and whether the max stayed under ``--max-store-rss-mb``
/ ``--max-serve-rss-mb``.

Run: ``.venv/bin/python benchmarks/bench_soak_kill.py [--backend falkordb|neo4j] [--minutes 10]
[--kill-every 20] [--images 150] [--json PATH]``. Exit 1 when anything was lost or an RSS bound
was passed. Every process it starts is stopped at the end (on error and Ctrl-C too); it never
touches a server it did not start (the pid is read from its own data directory and checked).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make ``benchmarks.*`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.harness import median, parse_args, rss_mb, say, write_json

COVR = [sys.executable, "-m", "covr.cli.main"]
BAD_KINDS = ("whitespace-keys", "colliding-colon-ids", "width-1e19")
"""The three record kinds of issue 40 that passed validation and failed the store's create."""
NEO4J_ENV = {"COVR_NEO4J_BOLT_PORT": "0", "COVR_NEO4J_HEAP": "768m", "COVR_NEO4J_PAGECACHE": "256m"}
DEFAULT_STORE_RSS_MB = {"falkordb": 1024.0, "neo4j": 2560.0}
SERVE_RSS_MB = 1024.0
STORE_BACK_S = 300.0
"""How long the store may take to answer again after a kill (a Neo4j start under load)."""


# ------------------------------------------------------------------------------- scene graphs
def _renamed(graph: Any, suffix: str) -> Any:
    """A new version of ``graph``: every object renamed (what a corrected dataset file does)."""
    objects = tuple(dataclasses.replace(o, name=o.name + suffix) for o in graph.objects)
    return dataclasses.replace(graph, objects=objects)


def _fresh(count: int, seed: int, prefix: str, source: str = "gqa") -> list[Any]:
    """``count`` synthetic scene graphs under new ids ``<prefix>-<n>`` (few objects: a round is
    seconds, not minutes)."""
    from covr_loaders import synthetic

    out = []
    for n, graph in enumerate(synthetic.generate(count, seed=seed, split="train")):
        keep = {o.id for o in graph.objects[:6]}
        relations = []
        per_subject: dict[str, int] = {}
        for r in graph.relations:
            if r.subject in keep and r.object in keep:
                # GQA numbers a subject's relations in order: ids as a GQA file gives them back
                k = per_subject.get(r.subject, 0)
                per_subject[r.subject] = k + 1
                relations.append(dataclasses.replace(r, id=f"{r.subject}.{k}"))
        out.append(
            dataclasses.replace(
                graph,
                source=source,
                original_id=f"{prefix}-{n}",
                objects=graph.objects[:6],
                relations=tuple(relations),
            )
        )
    return out


def bad_gqa_records(kind: str, prefix: str) -> dict[str, Any]:
    """The GQA records of one bad kind (keys under ``prefix``): each the store would refuse."""
    obj = {"name": "man", "x": 1, "y": 1, "w": 2, "h": 2, "attributes": [], "relations": []}
    if kind == "whitespace-keys":
        return {f"{prefix}-ws": {"width": 10, "height": 10, "objects": {"1": obj, " 1": obj}}}
    if kind == "colliding-colon-ids":
        return {
            f"{prefix}k:x": {"width": 10, "height": 10, "objects": {"c": obj}},
            f"{prefix}k": {"width": 10, "height": 10, "objects": {"x:c": obj}},
        }
    return {f"{prefix}-wide": {"width": 1e19, "height": 10, "objects": {"1": obj}}}


def bad_rpc_graph(kind: str, prefix: str) -> Any:
    """The same kinds as one scene graph of an ImportSceneGraphs stream."""
    from covr.scene.model import Object, SceneGraph

    if kind == "whitespace-keys":
        objects = (Object("1", "man"), Object(" 1", "man"))
        return SceneGraph("svc", f"{prefix}-ws", "train", objects=objects)
    if kind == "colliding-colon-ids":
        return SceneGraph("svc", f"{prefix}-c", "train", objects=(Object("x:c", "man"),))
    return SceneGraph("svc", f"{prefix}-w", "train", width=1e19, objects=(Object("1", "man"),))


# ------------------------------------------------------------------------------- bookkeeping
@dataclass
class Ledger:
    """What each image may be: the versions its writes allow, and what was acknowledged."""

    allowed: dict[str, list[Any]] = field(default_factory=dict)
    """image id -> the versions it may be now (one after an acknowledged write)."""
    seen: set[str] = field(default_factory=set)
    """every image id that was ever read back stored."""
    touched: set[str] = field(default_factory=set)
    """ids written (or tried) since the last check."""
    bad_ids: set[str] = field(default_factory=set)
    """ids of the bad records sent (refused, or for a colliding pair one half stored)."""
    acknowledged: int = 0
    unacknowledged: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def wrote(self, graphs: list[Any], acknowledged: bool) -> None:
        with self.lock:
            for g in graphs:
                self.touched.add(g.image_id)
                if acknowledged:
                    self.allowed[g.image_id] = [g]
                    self.acknowledged += 1
                else:
                    self.allowed.setdefault(g.image_id, [None]).append(g)
                    self.unacknowledged += 1

    def settle(self, image_id: str, now: Any) -> None:
        """After a check: the image is what was read (one of its allowed versions)."""
        self.allowed[image_id] = [now]


@dataclass
class Check:
    """One round's (or the final) read-back."""

    checked: int = 0
    lost: list[str] = field(default_factory=list)
    """acknowledged or earlier-seen images missing, or not one of their allowed versions."""
    disappeared: list[str] = field(default_factory=list)


# ------------------------------------------------------------------------------- processes
def store_pid(data_dir: Path) -> int | None:
    """The running store server's pid, from the data directory's ``server.json``."""
    for path in (data_dir / "server.json", data_dir / "neo4j" / "server.json"):
        with contextlib.suppress(OSError, ValueError, KeyError):
            return int(json.loads(path.read_text())["pid"])
    return None


def kill_store(data_dir: Path, backend: str) -> int | None:
    """SIGKILL the store server of ``data_dir`` (checked to be that server); its pid or None."""
    from covr.graph.managed import pid_runs

    pid = store_pid(data_dir)
    marker = b"redis-server" if backend == "falkordb" else b"java"
    if pid is None or not pid_runs(pid, marker):
        return None
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    return pid


class RssWatch(threading.Thread):
    """VmRSS of ``covr serve`` and of the store (re-read from ``server.json``) every 0.5 s."""

    def __init__(self, serve_pid: int, data_dir: Path) -> None:
        super().__init__(daemon=True, name="rss-watch")
        self.serve_pid, self.data_dir = serve_pid, data_dir
        self.serve: list[float] = []
        self.store: list[float] = []
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.wait(0.5):
            serve = rss_mb(self.serve_pid)
            if serve == serve:  # not NaN
                self.serve.append(serve)
            pid = store_pid(self.data_dir)
            store = rss_mb(pid) if pid is not None else float("nan")
            if store == store:
                self.store.append(store)


def summary_mb(values: list[float]) -> dict[str, float | None]:
    if not values:
        return {"min": None, "median": None, "max": None}
    return {"min": round(min(values)), "median": round(median(values)), "max": round(max(values))}


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def served_store(work: Path, backend: str) -> Iterator[tuple[dict[str, str], str, Any]]:
    """``covr serve`` on a fresh data directory (it starts and owns the store); yields the
    environment for ``covr`` children, the target and the process. Stops the service, then the
    store (``covr db stop``, then SIGKILL of the pid in its own ``server.json``)."""
    data_dir = work / "d"
    env = {
        **{
            k: v
            for k, v in os.environ.items()
            if not k.startswith("COVR_") or k == "COVR_SERVER_REGISTRY"  # the tests' sweep
        },
        "COVR_DATA_DIR": str(data_dir),
        "COVR_GRAPH_URI": "",
        "COVR_GRAPH_BACKEND": backend,
        **NEO4J_ENV,
    }
    port = free_port()
    log = (work / "serve.log").open("a", encoding="utf-8")
    server = subprocess.Popen(
        [*COVR, "serve", "--port", str(port), "--no-samples"],
        env={**env, "COVR_SERVICE_LOG_REQUESTS": "false"},
        stdout=subprocess.PIPE,
        stderr=log,
        text=True,
    )
    log.close()
    try:
        assert server.stdout is not None
        line = server.stdout.readline()
        if not line.startswith("listening on"):
            raise RuntimeError(f"covr serve did not start: {line!r} (see {work / 'serve.log'})")
        yield env, f"127.0.0.1:{port}", server
    finally:
        if server.poll() is None:
            server.send_signal(signal.SIGTERM)
            try:
                server.wait(timeout=60)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
        subprocess.run([*COVR, "db", "stop"], env=env, check=False, capture_output=True)
        kill_store(data_dir, backend)


def wait_answering(target: str, timeout: float = STORE_BACK_S) -> tuple[float, str]:
    """Seconds until GetStatistics answers OK (the service restarts a killed store then), and
    the last error when it never did within ``timeout`` (else "")."""
    import grpc

    from covr.v1 import service_pb2_grpc, store_pb2

    began = time.monotonic()
    with grpc.insecure_channel(target) as channel:
        stub = service_pb2_grpc.CovrServiceStub(channel)
        while True:
            try:
                stub.GetStatistics(store_pb2.GetStatisticsRequest(), timeout=60)
                return time.monotonic() - began, ""
            except grpc.RpcError as exc:
                if time.monotonic() - began > timeout:
                    return time.monotonic() - began, f"{exc.code().name}: {exc.details()}"
                time.sleep(0.5)


# ------------------------------------------------------------------------------- writers
def run_load(
    env: dict[str, str], path: Path, good: list[Any], ledger: Ledger, stats: dict[str, int]
) -> None:
    """``covr load gqa`` of ``path``; the good images are acknowledged when it exits 0 and names
    no problem for them."""
    done = subprocess.run(
        [*COVR, "load", "gqa", str(path), "--split", "train", "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    stats["loads"] += 1
    bad_keys: set[str] = set()
    if done.returncode == 0:
        with contextlib.suppress(ValueError):
            report = json.loads(done.stdout)
            bad_keys = {str(p.get("record")) for p in report.get("problems", [])}
            stats["load_problems"] += len(report.get("problems", []))
    ok = done.returncode == 0
    stats["loads_ok" if ok else "loads_failed"] += 1
    acked = [g for g in good if ok and g.original_id not in bad_keys]
    ledger.wrote(acked, True)
    ledger.wrote([g for g in good if g not in acked], False)
    if ok and len(acked) != len(good):
        stats["good_records_refused"] += len(good) - len(acked)


def import_loop(
    target: str,
    stop: threading.Event,
    ledger: Ledger,
    stats: dict[str, int],
    round_no: int,
    pool: list[Any],
    rng: random.Random,
) -> None:
    """ImportSceneGraphs streams until ``stop``: 3 good scene graphs (new, or a new version of an
    earlier import) and, every other stream, one bad one."""
    import grpc

    from covr.service.convert import scene_graph_to_proto
    from covr.v1 import service_pb2_grpc, store_pb2

    n = 0
    with grpc.insecure_channel(target) as channel:
        stub = service_pb2_grpc.CovrServiceStub(channel)
        while not stop.is_set():
            n += 1
            prefix = f"r{round_no}i{n}"
            good = _fresh(2, seed=round_no * 1000 + n, prefix=prefix, source="svc")
            if pool:
                good.append(_renamed(rng.choice(pool), f"v{round_no}x{n}"))
            good = list({g.image_id: g for g in good}.values())
            graphs = list(good)
            if n % 2 == 0:
                poison = bad_rpc_graph(BAD_KINDS[(n // 2) % 3], prefix)
                ledger.bad_ids.add(poison.image_id)
                graphs.insert(1, poison)
            messages = [store_pb2.ImportSceneGraphsRequest(options=store_pb2.ImportOptions())]
            messages += [
                store_pb2.ImportSceneGraphsRequest(scene_graph=scene_graph_to_proto(g))
                for g in graphs
            ]
            stats["imports"] += 1
            try:
                answer = stub.ImportSceneGraphs(iter(messages), timeout=120)
            except grpc.RpcError as exc:
                ledger.wrote(good, False)
                code = f"imports_{exc.code().name}"
                stats[code] = stats.get(code, 0) + 1
                time.sleep(0.2)
                continue
            acked = answer.written == len(good) and answer.skipped == len(graphs) - len(good)
            stats["imports_ok" if acked else "imports_partial"] += 1
            stats["import_problems"] += answer.skipped
            ledger.wrote(good, acked)
            if acked:
                pool.extend(g for g in good if g.source == "svc")
            time.sleep(0.05)


# ------------------------------------------------------------------------------- the check
def check(
    settings: Any, ledger: Ledger, ids: set[str], listed: set[str], attempts: int = 5
) -> Check:
    """Read ``ids`` back from the store and compare with the ledger; ``listed`` is every image
    id stored now (an earlier-seen id missing from it has disappeared)."""
    from covr.graph import open_store
    from covr.graph.errors import StoreUnavailable
    from covr_loaders.readback import get_scene_graphs

    out = Check()
    out.disappeared = sorted(ledger.seen - listed)
    for attempt in range(attempts):
        try:
            with open_store(settings.graph) as store:
                ordered = sorted(ids)
                stored: dict[str, Any] = {}
                for start in range(0, len(ordered), 500):
                    stored.update(get_scene_graphs(store, ordered[start : start + 500]))
            break
        except StoreUnavailable:
            if attempt == attempts - 1:
                raise
            time.sleep(2)
    for image_id in sorted(ids):
        now = stored.get(image_id)
        allowed = ledger.allowed.get(image_id, [None])
        out.checked += 1
        if now not in allowed or (now is None and image_id in ledger.seen):
            out.lost.append(image_id)
            continue
        if now is not None:
            ledger.seen.add(image_id)
        ledger.settle(image_id, now)
    return out


def list_ids(target: str) -> set[str]:
    import grpc

    from covr.v1 import service_pb2_grpc, store_pb2

    with grpc.insecure_channel(target) as channel:
        stub = service_pb2_grpc.CovrServiceStub(channel)
        ids: set[str] = set()
        token = ""
        while True:
            pages = stub.ListImages(store_pb2.ListImagesRequest(page_token=token), timeout=120)
            token = ""
            for page in pages:
                ids.update(page.image_ids)
                token = page.next_page_token
            if not token:
                return ids


# ------------------------------------------------------------------------------- the soak
def soak(
    backend: str = "falkordb",
    minutes: float = 10.0,
    kill_every: float = 20.0,
    images: int = 150,
    replace: int = 40,
    bad_every: int = 2,
    sample: int = 300,
    max_rounds: int | None = None,
    kill_rounds: tuple[int, ...] | None = None,
    max_store_rss_mb: float | None = None,
    max_serve_rss_mb: float = SERVE_RSS_MB,
    seed: int = 40,
    work: Path | None = None,
    store_back_s: float = STORE_BACK_S,
) -> dict[str, Any]:
    """Run the soak; the report (``ok`` is False when anything was lost or a bound passed).

    ``kill_rounds`` (a test's choice) kills in exactly those rounds instead of every
    ``kill_every`` seconds."""
    from covr.settings import Settings
    from covr_loaders import gqa

    work = work or Path(tempfile.mkdtemp(prefix=f"covr-soak-kill-{backend[:3]}-"))
    rng = random.Random(seed)
    ledger = Ledger()
    stats: dict[str, int] = dict.fromkeys(("loads", "loads_ok", "loads_failed", "load_problems", "good_records_refused", "imports", "imports_ok", "imports_partial", "import_problems"), 0)  # fmt: skip
    stats["kills_during_load"] = 0
    counters: dict[str, int] = {}
    rounds: list[dict[str, Any]] = []
    kills: list[dict[str, Any]] = []
    lost: list[str] = []
    disappeared: list[str] = []
    store_bound = max_store_rss_mb or DEFAULT_STORE_RSS_MB[backend]
    began = time.monotonic()
    deadline = began + minutes * 60
    say(f"soak on {backend} in {work}: {minutes} min, a kill every {kill_every} s")
    with served_store(work, backend) as (env, target, server):
        values: dict[str, Any] = {"data_dir": work / "d", "graph_uri": "", "graph_backend": backend}
        settings = Settings(_env_file=None, neo4j_bolt_port=0, **values)  # type: ignore[call-arg]
        watch = RssWatch(server.pid, work / "d")
        watch.start()
        last_kill = time.monotonic()
        last_load_s = 1.0
        loaded_pool: list[Any] = []
        imported_pool: list[Any] = []
        round_no = 0
        unanswering: dict[str, Any] = {}
        try:
            while time.monotonic() < deadline and (max_rounds is None or round_no < max_rounds):
                round_no += 1
                prefix = f"r{round_no}"
                new = _fresh(images, seed=seed * 100_000 + round_no, prefix=prefix)
                again = [
                    _renamed(g, f"v{round_no}")
                    for g in rng.sample(loaded_pool, min(replace, len(loaded_pool)))
                ]
                good = new + again
                records: dict[str, Any] = dict(gqa.to_record(g) for g in good)
                bad = ""
                if bad_every and round_no % bad_every == 0:
                    bad = BAD_KINDS[(round_no // bad_every) % len(BAD_KINDS)]
                    bad_records = bad_gqa_records(bad, prefix)
                    records.update(bad_records)
                    ledger.bad_ids.update(f"gqa:{key}" for key in bad_records)
                path = work / f"round-{round_no}.json"
                path.write_text(json.dumps(records))
                stop = threading.Event()
                round_stats = dict.fromkeys((k for k in stats if k != "kills_during_load"), 0)
                importer = threading.Thread(
                    target=_count_into,
                    args=(counters, import_loop),
                    kwargs={
                        "target": target,
                        "stop": stop,
                        "ledger": ledger,
                        "stats": round_stats,
                        "round_no": round_no,
                        "pool": imported_pool,
                        "rng": random.Random(seed + round_no),
                    },
                    daemon=True,
                )
                killer: threading.Timer | None = None
                killed: list[int] = []
                loading = threading.Event()
                due = time.monotonic() - last_kill >= kill_every
                if kill_rounds is not None:
                    due = round_no in kill_rounds
                if due:
                    # inside the load's writing, usually (a load's first half is start-up)
                    delay = rng.uniform(0.4, 0.95) * last_load_s

                    def kill(
                        killed: list[int] = killed, loading: threading.Event = loading
                    ) -> None:
                        pid = kill_store(work / "d", backend)
                        if pid is not None:
                            killed.append(pid)
                            stats["kills_during_load"] += loading.is_set()

                    killer = threading.Timer(delay, kill)
                    last_kill = time.monotonic()
                started = time.monotonic()
                importer.start()
                if killer is not None:
                    killer.start()
                round_stats_load = dict.fromkeys(round_stats, 0)
                loading.set()
                load_began = time.monotonic()
                try:
                    run_load(env, path, good, ledger, round_stats_load)
                finally:
                    loading.clear()
                    last_load_s = time.monotonic() - load_began
                    stop.set()
                    importer.join(180)
                    if killer is not None:
                        killer.join()
                path.unlink()
                back_s, error = wait_answering(target, store_back_s)
                if error:  # the store is up but cannot answer: stop, and say so
                    unanswering = {"round": round_no, "error": error[:500]}
                    say(f"round {round_no}: GetStatistics fails for {back_s:.0f} s: {error}")
                    break
                for k in {*round_stats, *round_stats_load}:
                    stats[k] = stats.get(k, 0) + round_stats.get(k, 0) + round_stats_load.get(k, 0)
                if killed:
                    kills.append({"round": round_no, "pid": killed[0], "back_s": round(back_s, 1)})
                loaded_pool.extend(new)
                listed = list_ids(target)
                older = [i for i in ledger.allowed if i not in ledger.touched]
                ids = set(ledger.touched) | set(rng.sample(older, min(sample, len(older))))
                ledger.touched.clear()
                result = check(settings, ledger, ids, listed)
                lost += result.lost
                disappeared += result.disappeared
                row = {
                    "round": round_no,
                    "seconds": round(time.monotonic() - started, 1),
                    "bad": bad,
                    "killed": bool(killed),
                    "load_ok": bool(round_stats_load["loads_ok"]),
                    "imports": round_stats["imports"],
                    "checked": result.checked,
                    "lost": len(result.lost),
                    "disappeared": len(result.disappeared),
                    "stored": len(listed),
                }
                rounds.append(row)
                say(
                    f"round {round_no}: {row['seconds']} s, bad {bad or '-'}, "
                    f"{'KILL ' if killed else ''}load {'ok' if row['load_ok'] else 'failed'}, "
                    f"{row['imports']} imports, checked {row['checked']}, lost {row['lost']}, "
                    f"stored {row['stored']}"
                )
            # the final check: every image the ledger knows, read back
            if not unanswering:
                wait_answering(target)
            try:
                listed = list_ids(target)
            except Exception as exc:  # a damaged store: reads by id may still answer
                unanswering.setdefault("list_error", repr(exc)[:500])
                listed = set(ledger.seen)
            final = check(settings, ledger, set(ledger.allowed), listed)
            lost += final.lost
            disappeared += final.disappeared
        finally:
            watch.done.set()
            watch.join(5)
        serve_alive = server.poll() is None
    # an id stored that no write of the soak made (a staged copy, a half-written bad record
    # under another id): the colliding pair's valid half may be stored, nothing else
    stray = sorted(i for i in listed if i not in ledger.allowed and i not in ledger.bad_ids)
    store_rss, serve_rss = summary_mb(watch.store), summary_mb(watch.serve)
    report: dict[str, Any] = {
        "backend": backend,
        "minutes": round((time.monotonic() - began) / 60, 2),
        "rounds": len(rounds),
        "kills": len(kills),
        "store_back_s": summary_mb([k["back_s"] for k in kills]) if kills else None,
        "images_acknowledged": ledger.acknowledged,
        "writes_unacknowledged": ledger.unacknowledged,
        "images_checked_at_end": final.checked,
        "images_stored_at_end": len(listed),
        "checks_during": sum(r["checked"] for r in rounds),
        "lost": len(set(lost)),
        "lost_examples": sorted(set(lost))[:10],
        "disappeared": len(set(disappeared)),
        "stray_ids": stray[:10],
        "bad_files": sum(1 for r in rounds if r["bad"]),
        **stats,
        **dict(counters.items()),
        "store_rss_mb": store_rss,
        "serve_rss_mb": serve_rss,
        "store_rss_bound_mb": store_bound,
        "serve_rss_bound_mb": max_serve_rss_mb,
        "rss_bounded": (store_rss["max"] or 0) <= store_bound
        and (serve_rss["max"] or 0) <= max_serve_rss_mb,
        "serve_alive_after": serve_alive,
        "unanswering": unanswering,
        "work": str(work),
        "round_rows": rounds,
        "kill_rows": kills,
    }
    report["ok"] = (
        report["lost"] == 0
        and report["disappeared"] == 0
        and not stray
        and report["rss_bounded"]
        and serve_alive
        and not unanswering
    )
    return report


def _count_into(counters: dict[str, int], fn: Any, **kwargs: Any) -> None:
    """Run a writer thread; an exception in it is counted (and printed), not lost."""
    try:
        fn(**kwargs)
    except Exception as exc:  # a writer that died is reported in the summary
        counters[f"writer_error_{type(exc).__name__}"] = (
            counters.get(f"writer_error_{type(exc).__name__}", 0) + 1
        )
        say(f"writer error: {exc!r}")


def table(report: dict[str, Any]) -> str:
    """The summary as a Markdown table (docs/security.md)."""
    s, v = report["store_rss_mb"], report["serve_rss_mb"]
    rows = [
        ("backend", report["backend"]),
        ("minutes", report["minutes"]),
        ("rounds (files with bad records)", f"{report['rounds']} ({report['bad_files']})"),
        ("kill -9 of the store (during a load)", f"{report['kills']} ({report['kills_during_load']})"),
        ("loads ok / failed", f"{report['loads_ok']} / {report['loads_failed']}"),
        ("imports ok / partial / failed", f"{report['imports_ok']} / {report['imports_partial']}"
         f" / {report['imports'] - report['imports_ok'] - report['imports_partial']}"),
        ("bad records refused (load / import)",
         f"{report['load_problems']} / {report['import_problems']}"),
        ("images acknowledged / unacknowledged writes",
         f"{report['images_acknowledged']} / {report['writes_unacknowledged']}"),
        ("images read back (during / at the end)",
         f"{report['checks_during']} / {report['images_checked_at_end']}"),
        ("lost / disappeared", f"{report['lost']} / {report['disappeared']}"),
        ("store answering after every kill", "yes" if not report["unanswering"] else
         f"no: after round {report['unanswering']['round']}, {report['unanswering']['error']}"),
        ("store RSS MB min / median / max", f"{s['min']} / {s['median']} / {s['max']}"),
        ("serve RSS MB min / median / max", f"{v['min']} / {v['median']} / {v['max']}"),
        ("RSS under bounds", f"{report['rss_bounded']} (store {report['store_rss_bound_mb']:.0f},"
         f" serve {report['serve_rss_bound_mb']:.0f} MB)"),
    ]  # fmt: skip
    return "\n".join(["| | |", "|---|---|", *(f"| {k} | {val} |" for k, val in rows)])


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--backend", choices=("falkordb", "neo4j"), default="falkordb")
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--kill-every", type=float, default=20.0)
    parser.add_argument("--images", type=int, default=150)
    parser.add_argument("--replace", type=int, default=40)
    parser.add_argument("--bad-every", type=int, default=2)
    parser.add_argument("--sample", type=int, default=300)
    parser.add_argument("--max-rounds", type=int, default=None)
    parser.add_argument("--max-store-rss-mb", type=float, default=None)
    parser.add_argument("--max-serve-rss-mb", type=float, default=SERVE_RSS_MB)
    parser.add_argument("--seed", type=int, default=40)
    parser.add_argument(
        "--store-back-s",
        type=float,
        default=STORE_BACK_S,
        help="How long the service may fail after a kill before the soak stops and says so.",
    )
    parser.add_argument("--json", type=Path, default=None)
    quick = {
        "minutes": 0.6,
        "kill_every": 2.0,
        "images": 30,
        "replace": 10,
        "max_rounds": 6,
        "store_back_s": 60.0,
    }
    args = parse_args(parser, quick)
    # SIGTERM unwinds like Ctrl-C, so the service and the store are stopped
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    report = soak(
        backend=args.backend,
        minutes=args.minutes,
        kill_every=args.kill_every,
        images=args.images,
        replace=args.replace,
        bad_every=args.bad_every,
        sample=args.sample,
        max_rounds=args.max_rounds,
        max_store_rss_mb=args.max_store_rss_mb,
        max_serve_rss_mb=args.max_serve_rss_mb,
        seed=args.seed,
        store_back_s=args.store_back_s,
    )
    print(table(report))
    print(json.dumps({k: v for k, v in report.items() if k != "round_rows"}, indent=1))
    if args.json:
        write_json(args.json, report)
    if report["ok"]:  # a failed run keeps its data directory and serve.log to look into
        shutil.rmtree(report["work"], ignore_errors=True)
    return 0 if report["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
