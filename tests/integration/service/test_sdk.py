"""The SDK against a real server: sync and async clients, typed results, SDK exceptions, and the
README examples executed as written."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

from covr_client import (
    AsyncClient,
    Client,
    CovrError,
    InvalidArgumentError,
    NotFoundError,
    Object,
    RetryPolicy,
    SceneGraph,
    Statistics,
)
from covr_client.errors import ERROR_CLASSES
from tests.support.service_server import TestServer

README = Path(__file__).resolve().parents[3] / "clients" / "python" / "README.md"


def readme_examples() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.DOTALL)


@pytest.mark.parametrize("index", range(len(readme_examples())))
def test_readme_examples_run(index: int, capsys: pytest.CaptureFixture[str]) -> None:
    code = readme_examples()[index]
    exec(compile(code, f"README.md example {index + 1}", "exec"), {"__name__": "readme"})
    assert capsys.readouterr().out.strip()


def test_sync_client_typed_results(client: Client) -> None:
    stats = client.statistics()
    assert isinstance(stats, Statistics)
    graph = client.get_scene_graph("gqa:2370799")
    assert isinstance(graph, SceneGraph)
    assert all(isinstance(o, Object) for o in graph.objects)
    assert isinstance(graph.width, int)  # whole numbers come back as int


def test_error_classes_carry_code_and_details(client: Client) -> None:
    with pytest.raises(NotFoundError) as missing:
        client.get_scene_graph("gqa:none")
    assert isinstance(missing.value, CovrError)
    assert missing.value.code == "NOT_FOUND"
    with pytest.raises(InvalidArgumentError) as bad:
        client.list_subgraphs("")
    assert bad.value.field_violations[0].field == "image_id"
    assert bad.value.details  # the packed google.rpc.BadRequest
    assert ERROR_CLASSES["INVALID_ARGUMENT"] is InvalidArgumentError


def test_client_arguments_are_keyword_only_and_checked(server: TestServer) -> None:
    with pytest.raises(TypeError):
        Client(server.target, "token")  # type: ignore[call-arg]
    with pytest.raises(ValueError, match="timeout"):
        Client(server.target, timeout=0)
    with pytest.raises(ValueError, match="max_attempts"):
        RetryPolicy(max_attempts=0)
    with server.client() as c, pytest.raises(ValueError, match="exactly one"):
        next(c.find_related_images())


def test_async_client(server: TestServer) -> None:
    async def run() -> None:
        async with AsyncClient(server.target, timeout=10) as client:
            assert await client.health()
            stats = await client.statistics()
            assert stats.totals.images >= 24
            graph = await client.get_scene_graph("vg:1")
            assert graph.image_id == "vg:1"
            ids = [i async for i in client.list_images(source="vg", page_size=2)]
            assert ids == sorted(ids)
            assert "vg:1" in ids
            subgraphs = await client.list_subgraphs("vg:1", max_subgraphs=3)
            assert len(subgraphs) == 3
            pages = [p async for p in client.find_related_images(subgraphs[0].key, seed=2)]
            assert pages[0].query.key == subgraphs[0].key
            result = await client.import_scene_graphs(
                [SceneGraph("asyncsdk", "1", "val", objects=(Object("1", "cat"),))]
            )
            assert result.written == 1
            with pytest.raises(NotFoundError):
                await client.get_scene_graph("vg:none")
            with pytest.raises(InvalidArgumentError) as err:
                await client.score_exclusivity([("object", "", "x")])
            assert err.value.field_violations[0].field == "pairs[0].x"

    asyncio.run(run())


def test_the_sdk_builds_as_its_own_distribution(tmp_path: Path) -> None:
    """The wheel holds the stubs (with their .pyi) and py.typed, and needs grpcio + protobuf only."""
    import subprocess
    import sys
    import zipfile

    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
         "--wheel-dir", str(tmp_path), str(README.parent)],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    wheel = next(tmp_path.glob("covr_client-*.whl"))
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        metadata = next(n for n in names if n.endswith("METADATA"))
        requires = [
            line.split(":", 1)[1].strip()
            for line in archive.read(metadata).decode().splitlines()
            if line.startswith("Requires-Dist:")
        ]
    assert {"covr_client/py.typed", "covr_client/_proto/service_pb2_grpc.py"} <= names
    assert "covr_client/_proto/scene_pb2.pyi" in names
    assert "covr_client/testing.py" in names
    assert sorted(r.split(">")[0].split("<")[0].strip() for r in requires) == ["grpcio", "protobuf"]


def test_the_sdk_test_server_runs_covr_serve_as_a_subprocess() -> None:
    """``covr_client.testing`` starts the public entry point in a child process with the given
    settings, and stops it (SIGTERM) when the block ends."""
    import os

    from covr_client.testing import running_server as sdk_server

    with sdk_server(samples=False, service_token="s3cret") as running, running.client() as c:
        assert running.process.pid != os.getpid()
        assert c.health()
        assert c.statistics().totals.images == 0
    assert running.process.poll() is not None
