"""Both committed copies of the stubs equal a fresh generation from proto/ (scripts/gen_proto.py)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[3]


def _gen_module() -> Any:
    spec = importlib.util.spec_from_file_location("gen_proto", ROOT / "scripts" / "gen_proto.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["gen_proto"] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("which", ["SERVER", "SDK"])
def test_committed_stubs_match_the_proto_files(which: str) -> None:
    gen = _gen_module()
    target = getattr(gen, which)
    assert gen.differences(target.out_dir, target) == [], "run `make proto` and commit the stubs"


def test_a_changed_stub_is_detected(tmp_path: Path) -> None:
    gen = _gen_module()
    copy = tmp_path / "_proto"
    gen.generate(copy)
    target = copy / "scene_pb2.py"
    target.write_text(target.read_text() + "\n# edited\n")
    assert gen.differences(copy) == ["scene_pb2.py"]


def test_the_server_copy_keeps_protoc_import_names() -> None:
    text = (ROOT / "server" / "covr" / "v1" / "service_pb2_grpc.py").read_text()
    assert "from covr.v1 import" in text
    assert "covr_client" not in text


def test_stubs_do_not_import_the_server() -> None:
    for path in (ROOT / "clients" / "python" / "covr_client").rglob("*.py"):
        text = path.read_text()
        assert "from covr." not in text, path
        assert "import covr." not in text, path
