"""Server behaviour around the RPCs: deadlines down to the store, cancellation, auth, TLS, health,
reflection, metrics, capacity limits, undecodable requests, keepalive agreement with the SDK."""

from __future__ import annotations

import contextlib
import datetime
import ipaddress
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import (
    ProtoReflectionDescriptorDatabase,
)

from covr.service.deadline import DeadlineStore, RequestDeadlines
from covr.settings import Settings
from covr_client import (
    Client,
    DeadlineExceededError,
    NotFoundError,
    ResourceExhaustedError,
    TlsConfig,
    UnauthenticatedError,
    UnavailableError,
)
from covr_client._proto import service_pb2_grpc, store_pb2
from covr_client.config import KEEPALIVE_TIME_S, NO_RETRY
from tests.support.recording_store import RecordingStore
from tests.support.service_server import TestServer, running_server

# ---------------------------------------------------------------------- deadlines


def test_the_rpc_deadline_becomes_the_query_timeout(server: TestServer) -> None:
    """Every read made for the RPC gets what is left of the client's deadline (not the cap).

    The bound has a little slack above the 5 s asked: gRPC's client computes the deadline on
    the wall clock and sends the time left rounded up to 10 ms, so a wall-clock step on the
    client's host (CI runs once saw one read above 5.0) can hand the server a few ms more.
    """
    recorder = RecordingStore(server.store)
    with running_server(store=recorder, query_timeout_s=30.0) as own, own.client() as client:
        client.get_scene_graph("gqa:2370799", timeout=5.0)
        reads = recorder.reads()
        assert reads
        assert all(t is not None and 0 < t <= 5.5 for t, _, _ in reads), reads
        recorder.forget()
        client.get_scene_graph("gqa:2370799", timeout=120.0)
        reads = recorder.reads()
        assert reads
        assert all(t == 30.0 for t, _, _ in reads), reads  # capped by COVR_QUERY_TIMEOUT_S


def test_a_passed_deadline_stops_before_the_store(server: TestServer) -> None:
    class Ctx:
        def time_remaining(self) -> float:
            return 0.0

    deadlines = RequestDeadlines()
    recorder = RecordingStore(server.store)
    bounded = DeadlineStore(recorder, deadlines.time_left, cap=30)
    from covr.graph import catalog
    from covr.graph.errors import QueryTimeout

    with deadlines.scope(Ctx()), pytest.raises(QueryTimeout):  # type: ignore[arg-type]
        bounded.read(catalog.get("admin/ping"))
    assert recorder.timeouts == []


def test_reads_stop_when_the_client_left_except_in_imports(server: TestServer) -> None:
    class Gone:
        def time_remaining(self) -> float:
            return 10.0

        def is_active(self) -> bool:
            return False

    from covr.graph import catalog
    from covr.graph.errors import QueryTimeout

    deadlines = RequestDeadlines()
    recorder = RecordingStore(server.store)
    bounded = DeadlineStore(recorder, deadlines.time_left, cap=30, cancelled=deadlines.cancelled)
    assert bounded.read(catalog.get("admin/ping"))  # outside an RPC: reads run
    with deadlines.scope(Gone()), pytest.raises(QueryTimeout):  # type: ignore[arg-type]
        bounded.read(catalog.get("admin/ping"))
    with deadlines.scope(Gone(), stop_reads=False):  # type: ignore[arg-type]
        assert bounded.read(catalog.get("admin/ping"))
    assert len(recorder.timeouts) == 2


def test_the_scope_hook_runs_before_each_read_of_its_thread(server: TestServer) -> None:
    """``before_read`` (GenerateQuestions hands its collected examples over there) runs before
    every read inside its scope, and not for reads outside it or of other threads."""

    class Active:
        def time_remaining(self) -> float:
            return 10.0

        def is_active(self) -> bool:
            return True

    from covr.graph import catalog

    deadlines = RequestDeadlines()
    bounded = DeadlineStore(
        server.store,
        deadlines.time_left,
        cap=30,
        cancelled=deadlines.cancelled,
        before_read=deadlines.before_read,
    )
    calls: list[str] = []
    bounded.read(catalog.get("admin/ping"))
    with deadlines.scope(Active(), before_read=lambda: calls.append("hook")):  # type: ignore[arg-type]
        bounded.read(catalog.get("admin/ping"))
        other = threading.Thread(target=lambda: bounded.read(catalog.get("admin/ping")))
        other.start()
        other.join()
        bounded.read(catalog.get("admin/ping"))
    bounded.read(catalog.get("admin/ping"))
    assert calls == ["hook", "hook"]


def test_deadline_exceeded(server: TestServer) -> None:
    slow = RecordingStore(server.store, delay=0.3)
    with running_server(store=slow) as own, own.client(retry=NO_RETRY) as client:
        started = time.monotonic()
        with pytest.raises(DeadlineExceededError) as err:
            client.get_scene_graph("gqa:2370799", timeout=0.1)
        assert err.value.code == "DEADLINE_EXCEEDED"
        assert time.monotonic() - started < 0.3


# ---------------------------------------------------------------------- cancellation


def test_a_cancelled_stream_stops_the_server_work(server: TestServer) -> None:
    slow = RecordingStore(server.store, delay=0.1)
    with running_server(store=slow) as own, grpc.insecure_channel(own.target) as channel:
        stub = service_pb2_grpc.CovrServiceStub(channel)
        call: Any = stub.ListImages(store_pb2.ListImagesRequest(page_size=1), timeout=30)
        first = next(call)
        assert len(first.image_ids) == 1
        call.cancel()
        time.sleep(1.0)  # 10 more pages would have been read by now without the cancel
        reads_after = len(slow.timeouts)
        time.sleep(0.5)
        assert len(slow.timeouts) == reads_after
        assert reads_after <= 3


def test_leaving_an_sdk_iterator_cancels(server: TestServer) -> None:
    slow = RecordingStore(server.store, delay=0.1)
    with running_server(store=slow) as own, own.client() as client:
        for image_id in client.list_images(page_size=1):
            assert image_id
            break
        time.sleep(0.8)
        assert len(slow.timeouts) <= 3


# ---------------------------------------------------------------------- auth, TLS


def test_bearer_token_auth() -> None:
    with running_server(service_token="s3cret") as own:
        with Client(own.target) as anonymous, pytest.raises(UnauthenticatedError):
            anonymous.statistics()
        with Client(own.target, token="wrong") as wrong, pytest.raises(UnauthenticatedError):
            wrong.statistics()
        with own.client() as right:
            assert right.statistics().totals.images >= 24
            assert right.health()
        with grpc.insecure_channel(own.target) as channel:  # probes need no token
            reply = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest())
            assert reply.status == health_pb2.HealthCheckResponse.SERVING


def test_without_a_token_no_auth_is_required(client: Client) -> None:
    assert client.statistics().totals.images >= 24


def _self_signed(directory: Path) -> tuple[Path, Path]:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = directory / "server.crt", directory / "server.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


def test_tls_with_a_generated_certificate(tmp_path: Path) -> None:
    cert, key = _self_signed(tmp_path)
    with running_server(service_tls_cert=cert, service_tls_key=key) as own:
        assert own.service.tls
        with own.client() as secure:
            assert secure.statistics().totals.images >= 24
        with (
            Client(own.target, timeout=2, retry=NO_RETRY) as plain,
            pytest.raises(UnavailableError),
        ):
            plain.statistics()
        elsewhere = tmp_path / "other"
        elsewhere.mkdir()
        stranger = TlsConfig(root_certificates=_self_signed(elsewhere)[0].read_bytes())
        with (
            Client(own.target, tls=stranger, timeout=2, retry=NO_RETRY) as wrong_ca,
            pytest.raises(UnavailableError),
        ):
            wrong_ca.statistics()


def test_tls_needs_both_files(tmp_path: Path) -> None:
    cert, _key = _self_signed(tmp_path)
    with (
        pytest.raises(ValueError, match="COVR_SERVICE_TLS_KEY"),
        running_server(service_tls_cert=cert),
    ):
        pass


# ---------------------------------------------------------------------- health, reflection, metrics


def test_health_and_reflection_are_listable(server: TestServer) -> None:
    with grpc.insecure_channel(server.target) as channel:
        health = health_pb2_grpc.HealthStub(channel)
        for name in ("", "covr.v1.CovrService"):
            reply = health.Check(health_pb2.HealthCheckRequest(service=name), timeout=5)
            assert reply.status == health_pb2.HealthCheckResponse.SERVING
        database = ProtoReflectionDescriptorDatabase(channel)
        services = set(database.get_services())
        assert {"covr.v1.CovrService", "grpc.health.v1.Health"} <= services
        assert database.FindFileContainingSymbol("covr.v1.SceneGraph").name == "covr/v1/scene.proto"


def test_graceful_stop_turns_health_not_serving(server: TestServer) -> None:
    with running_server(store=server.store) as own:
        service = own.service
        with grpc.insecure_channel(own.target) as channel:
            health = health_pb2_grpc.HealthStub(channel)
            assert health.Check(health_pb2.HealthCheckRequest(), timeout=5).status == 1
        service.stop(grace=1)
        with grpc.insecure_channel(own.target) as channel, pytest.raises(grpc.RpcError):
            health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=1)


def test_prometheus_metrics_are_opt_in(server: TestServer) -> None:
    assert server.service.metrics_port is None
    with running_server(store=server.store, service_metrics_port=_free_port()) as own:
        with own.client() as client:
            client.statistics()
            with pytest.raises(NotFoundError):
                client.get_scene_graph("gqa:none")
        port = own.service.metrics_port
        # RPCs are recorded when gRPC reports them finished, just after the client has its answer.
        for _ in range(50):
            text = (
                urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5)
                .read()
                .decode()
            )
            if 'method="/covr.v1.CovrService/GetSceneGraph"' in text:
                break
            time.sleep(0.05)
        assert (
            'covr_grpc_requests_total{code="OK",method="/covr.v1.CovrService/GetStatistics"}'
            in text
        )
        assert 'code="NOT_FOUND",method="/covr.v1.CovrService/GetSceneGraph"' in text
        assert "covr_grpc_request_seconds_bucket" in text


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# ---------------------------------------------------------------------- capacity, bad bytes


def test_over_capacity_is_refused_at_once(server: TestServer) -> None:
    slow = RecordingStore(server.store, delay=0.5)
    with running_server(store=slow, service_max_concurrent_rpcs=1) as own:
        results: list[str] = []

        def call() -> None:
            with own.client(retry=NO_RETRY) as c:
                try:
                    c.get_scene_graph("gqa:2370799")
                    results.append("OK")
                except ResourceExhaustedError as exc:
                    results.append(exc.code)

        threads = [threading.Thread(target=call) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert results.count("OK") >= 1
        assert "RESOURCE_EXHAUSTED" in results
        assert set(results) <= {"OK", "RESOURCE_EXHAUSTED"}


def test_a_busy_expensive_method_is_refused_with_a_retry_hint(server: TestServer) -> None:
    """All GenerateQuestions / FindRelatedImages slots taken (held here as a running call
    would): the next call is refused at once, cheap methods still answer, and the slot is
    usable again when freed."""
    admission = server.service.admission
    with server.client(retry=NO_RETRY) as c:
        for method, call in (
            # a whole generation on a cold Neo4j plans each new statement first (issue 15):
            # more than the client's default 10 s; the refusal itself must still be at once
            (
                "GenerateQuestions",
                lambda: list(c.generate_questions(image_id="gqa:2370799", timeout=180)),
            ),
            ("FindRelatedImages", lambda: list(c.find_related_images("tree", seed=1, timeout=180))),
        ):
            slots = admission.limits()[method]
            with contextlib.ExitStack() as held:
                for _ in range(slots):
                    held.enter_context(admission.slot(method))
                started = time.monotonic()
                with pytest.raises(ResourceExhaustedError) as refused:
                    call()
                assert time.monotonic() - started < 2  # refused at once, not queued
                assert method in refused.value.message
                assert refused.value.retry_after is not None
                assert refused.value.retry_after > 0
                assert c.get_scene_graph("gqa:2370799").image_id == "gqa:2370799"
            assert call()  # slots free again


def test_the_sdk_waits_out_a_busy_method_when_asked_to(server: TestServer) -> None:
    from covr_client import RetryPolicy

    admission = server.service.admission
    patient = RetryPolicy(
        max_attempts=20,
        initial_backoff=0.05,
        max_backoff=0.2,
        retry_codes=frozenset({"UNAVAILABLE", "RESOURCE_EXHAUSTED"}),
    )
    slots = admission.limits()["GenerateQuestions"]
    before = admission.refused("GenerateQuestions")
    held = contextlib.ExitStack()
    for _ in range(slots):
        held.enter_context(admission.slot("GenerateQuestions"))
    release = threading.Timer(0.5, held.close)
    release.start()
    try:
        with server.client(retry=patient) as c:
            examples = list(c.generate_questions(image_id="gqa:2370799", seed=3, count=5))
    finally:
        release.join()
    assert len(examples) == 5
    assert admission.refused("GenerateQuestions") > before  # it was refused, then served


def test_concurrent_generations_beyond_the_limit_get_resource_exhausted() -> None:
    with running_server(service_max_generations=1) as own:
        results: list[str] = []

        def call(seed: int) -> None:
            with own.client(retry=NO_RETRY) as c:
                try:
                    list(c.generate_questions(image_id="gqa:2370799", seed=seed))
                    results.append("OK")
                except ResourceExhaustedError as exc:
                    results.append(exc.code)

        threads = [threading.Thread(target=call, args=(seed,)) for seed in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert results.count("OK") >= 1
        assert set(results) <= {"OK", "RESOURCE_EXHAUSTED"}
        assert own.service.admission.refused("GenerateQuestions") == results.count(
            "RESOURCE_EXHAUSTED"
        )


def test_undecodable_request_bytes_are_invalid_argument(server: TestServer) -> None:
    with grpc.insecure_channel(server.target) as channel:
        raw = channel.unary_unary("/covr.v1.CovrService/GetSceneGraph", None, None)
        with pytest.raises(grpc.RpcError) as err:
            raw(b"\xff\xff\xff\xff", timeout=5)
        assert err.value.code() is grpc.StatusCode.INVALID_ARGUMENT
        stream = channel.stream_unary("/covr.v1.CovrService/ImportSceneGraphs", None, None)
        with pytest.raises(grpc.RpcError) as err:
            stream(iter([b"\x12\x05\x0a"]), timeout=5)
        assert err.value.code() is grpc.StatusCode.INVALID_ARGUMENT


def test_sdk_keepalive_is_within_what_the_server_allows() -> None:
    defaults = Settings(_env_file=None)  # type: ignore[call-arg]
    assert defaults.service_host == "127.0.0.1"  # local unless configured otherwise
    assert defaults.service_min_ping_interval_s <= KEEPALIVE_TIME_S


def test_unavailable_is_retried_then_raised() -> None:
    from covr_client import RetryPolicy

    policy = RetryPolicy(max_attempts=3, initial_backoff=0.05, max_backoff=0.1)
    with Client(f"127.0.0.1:{_free_port()}", timeout=5, retry=policy) as nowhere:
        started = time.monotonic()
        with pytest.raises(UnavailableError):
            nowhere.statistics()
        assert time.monotonic() - started < 4


def test_a_cancelled_import_ends_quietly_and_writes_all_or_nothing(
    server: TestServer, caplog: pytest.LogCaptureFixture
) -> None:
    """A client that gives up mid-stream: the server logs no error and keeps the store whole.

    Usually the server sees the cancel and writes nothing it had not flushed; when gRPC delivers
    the end of the request stream before the cancel, the import is complete from the server's
    view and is written (imports are idempotent), so either outcome is allowed, never a part.
    """
    from covr_client import Object, SceneGraph

    graph = SceneGraph("cancelled", "1", "val", objects=(Object("1", "cat"), Object("2", "dog")))

    def messages() -> Any:
        yield store_pb2.ImportSceneGraphsRequest(scene_graph=graph.to_proto())
        time.sleep(1.0)  # the client gives up meanwhile
        yield store_pb2.ImportSceneGraphsRequest(scene_graph=graph.to_proto())

    with (
        caplog.at_level("INFO", logger="covr.service"),
        grpc.insecure_channel(server.target) as channel,
    ):
        stub = service_pb2_grpc.CovrServiceStub(channel)
        future: Any = stub.ImportSceneGraphs.future(messages(), timeout=30)
        time.sleep(0.3)
        future.cancel()
        time.sleep(1.5)
    assert not [r for r in caplog.records if "internal error" in r.getMessage()]
    assert any("/ImportSceneGraphs " in r.getMessage() for r in caplog.records)
    with server.client() as client:
        with contextlib.suppress(NotFoundError):
            assert client.get_scene_graph("cancelled:1") == graph
        assert client.health()


def _start_falkordb(port: int, directory: Path) -> Any:
    """A FalkorDB server on a TCP port of its own (the external-server backend), to be killed."""
    import socket
    import subprocess

    from covr.graph.embedded import falkordb_binaries

    server, module = falkordb_binaries()
    process = subprocess.Popen(
        [str(server), "--port", str(port), "--bind", "127.0.0.1", "--save", "",
         "--appendonly", "no", "--dir", str(directory), "--loadmodule", str(module)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return process
        except OSError:
            time.sleep(0.1)
    process.kill()
    raise RuntimeError("FalkorDB did not start")


def test_store_down_is_unavailable_and_not_serving(tmp_path: Path) -> None:
    from covr.graph import open_store

    port = _free_port()
    falkordb = _start_falkordb(port, tmp_path)
    try:
        settings = Settings(  # type: ignore[call-arg]
            _env_file=None, data_dir=tmp_path, graph_uri=f"falkor://127.0.0.1:{port}"
        )
        store = open_store(settings.graph)
        store.apply_schema()
        with running_server(store=store) as own, own.client(retry=NO_RETRY, timeout=10) as client:
            assert client.statistics().totals.images == 0
            falkordb.kill()
            falkordb.wait()
            with pytest.raises(UnavailableError):
                client.statistics()
            with grpc.insecure_channel(own.target) as channel:
                health = health_pb2_grpc.HealthStub(channel)
                deadline = time.monotonic() + 20
                status = health_pb2.HealthCheckResponse.SERVING
                while time.monotonic() < deadline and status == 1:
                    time.sleep(0.5)
                    status = health.Check(health_pb2.HealthCheckRequest(), timeout=5).status
                assert status == health_pb2.HealthCheckResponse.NOT_SERVING
        store.close()
    finally:
        if falkordb.poll() is None:
            falkordb.kill()
            falkordb.wait()


def test_a_stopped_server_keeps_its_pair_scores_for_the_next_start(tmp_path: Path) -> None:
    """A graceful stop writes the exclusivity scores the server computed (docs/models.md, *Pair
    scores remembered between processes*); the next server on the data folder starts with them,
    so its first lookups do not score the vocabulary again."""
    from covr.models.exclusivity import OnnxExclusivity

    def model_of(server: TestServer) -> OnnxExclusivity:
        model = getattr(server.service.rooms.related.exclusivity, "model", None)
        assert isinstance(model, OnnxExclusivity), "the server runs without the exclusivity model"
        return model

    with running_server(data_dir=tmp_path) as first:
        image = first.service.rooms.related.image_ids("val")[0]
        with first.client(timeout=60) as client:
            assert list(client.find_related_images(image_id=image, max_subgraphs=2))
        scored = model_of(first).cache_size
        assert scored > 0
    assert list((tmp_path / "models").glob("*.pair-scores.npz"))
    with running_server(data_dir=tmp_path) as second:
        assert model_of(second).cache_size >= scored
