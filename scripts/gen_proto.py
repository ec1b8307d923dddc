"""Regenerate the Python stubs of ``proto/covr/v1`` into the SDK (``make proto``).

The stubs live in ``clients/python/covr_client/_proto/`` so that both the SDK and the server import
them without the SDK depending on the server. protoc names modules after the proto path
(``covr.v1.scene_pb2``), which would collide with the server's ``covr`` package, so the generated
imports are rewritten to ``covr_client._proto``. Only module references are rewritten: the
serialized descriptors keep the ``covr.v1`` package name that reflection and other languages see.

``--check`` regenerates into a temporary directory and exits 1 when the committed files differ
(the test suite runs the same comparison).
"""

from __future__ import annotations

import argparse
import filecmp
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROTO_ROOT = ROOT / "proto"
PROTO_DIR = PROTO_ROOT / "covr" / "v1"
OUT_DIR = ROOT / "clients" / "python" / "covr_client" / "_proto"
PACKAGE = "covr_client._proto"

_FROM_IMPORT = re.compile(r"^from covr\.v1 import (\w+_pb2)", re.MULTILINE)
_MODULE_REF = re.compile(r"\bcovr\.v1\.(\w+_pb2(?:_grpc)?)\b")
_HEADER = '"""Generated from proto/covr/v1 by scripts/gen_proto.py; do not edit."""\n'


def _rewrite(text: str) -> str:
    text = _FROM_IMPORT.sub(rf"from {PACKAGE} import \1", text)
    return _MODULE_REF.sub(rf"{PACKAGE}.\1", text)


def generate(out_dir: Path) -> list[Path]:
    """Run protoc (grpcio-tools) with mypy-protobuf and write the rewritten stubs to ``out_dir``."""
    protos = sorted(PROTO_DIR.glob("*.proto"))
    with tempfile.TemporaryDirectory() as raw:
        command = [
            sys.executable,
            "-m",
            "grpc_tools.protoc",
            f"-I{PROTO_ROOT}",
            f"--python_out={raw}",
            f"--grpc_python_out={raw}",
            f"--mypy_out={raw}",
            f"--mypy_grpc_out={raw}",
            *(str(p.relative_to(PROTO_ROOT)) for p in protos),
        ]
        env_path = str(Path(sys.executable).parent)
        import os

        env = {**os.environ, "PATH": f"{env_path}:{os.environ.get('PATH', '')}"}
        subprocess.run(command, check=True, cwd=PROTO_ROOT, env=env)
        generated = Path(raw) / "covr" / "v1"
        if out_dir.exists():
            shutil.rmtree(out_dir)
        out_dir.mkdir(parents=True)
        (out_dir / "__init__.py").write_text(_HEADER, encoding="utf-8")
        written = [out_dir / "__init__.py"]
        for path in sorted(generated.iterdir()):
            text = path.read_text(encoding="utf-8")
            if "_grpc" in path.name and "ServiceStub" not in text:
                continue  # files without a service: only imports, nothing to keep
            target = out_dir / path.name
            target.write_text(_rewrite(text), encoding="utf-8")
            written.append(target)
    return written


def differences(committed: Path = OUT_DIR) -> list[str]:
    """Names of files that differ between a fresh generation and ``committed``."""
    with tempfile.TemporaryDirectory() as fresh_dir:
        fresh = Path(fresh_dir) / "_proto"
        generate(fresh)
        names = {p.name for p in fresh.iterdir()} | {
            p.name for p in committed.glob("*") if p.is_file()
        }
        return sorted(
            n
            for n in names
            if not (fresh / n).exists()
            or not (committed / n).exists()
            or not filecmp.cmp(fresh / n, committed / n, shallow=False)
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare, do not write")
    args = parser.parse_args()
    if args.check:
        diff = differences()
        if diff:
            print("generated stubs differ from proto/: " + ", ".join(diff), file=sys.stderr)
            print("run `make proto` and commit the result", file=sys.stderr)
            return 1
        print("generated stubs are up to date")
        return 0
    for path in generate(OUT_DIR):
        print(path.relative_to(ROOT))
    return 0


if __name__ == "__main__":
    sys.exit(main())
