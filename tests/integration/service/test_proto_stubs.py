"""The committed stubs equal a fresh generation from proto/ (scripts/gen_proto.py)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[3]


def _gen_module() -> Any:
    spec = importlib.util.spec_from_file_location("gen_proto", ROOT / "scripts" / "gen_proto.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["gen_proto"] = module
    spec.loader.exec_module(module)
    return module


def test_committed_stubs_match_the_proto_files() -> None:
    gen = _gen_module()
    assert gen.differences() == [], "run `make proto` and commit the regenerated stubs"


def test_a_changed_stub_is_detected(tmp_path: Path) -> None:
    gen = _gen_module()
    copy = tmp_path / "_proto"
    gen.generate(copy)
    target = copy / "scene_pb2.py"
    target.write_text(target.read_text() + "\n# edited\n")
    assert gen.differences(copy) == ["scene_pb2.py"]


def test_stubs_do_not_import_the_server() -> None:
    stub_dir = ROOT / "clients" / "python" / "covr_client"
    for path in stub_dir.rglob("*.py"):
        if path.name == "testing.py":  # the test helper starts a server by design
            continue
        text = path.read_text()
        assert "from covr." not in text, path
        assert "import covr." not in text, path
