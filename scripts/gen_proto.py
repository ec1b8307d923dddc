"""Regenerate the Python stubs of ``proto/covr/v1`` for the server and the SDK (``make proto``).

Two committed copies, one generation: the server's stubs live in ``server/covr/v1/`` (import name
``covr.v1``, exactly what protoc emits, so nothing is rewritten) and the SDK's in
``clients/python/covr_client/_proto/``. Each side owns its stubs so that neither imports the
other: the SDK stays installable on its own (grpcio and protobuf only) and the server never
imports ``covr_client`` (DESIGN.md §1; ``tests/unit/test_architecture.py``). For the SDK copy the
generated imports are rewritten from ``covr.v1`` to ``covr_client._proto``, because an SDK that
imported ``covr.v1`` would collide with the server's ``covr`` package. Only module references are
rewritten: the serialized descriptors keep the ``covr.v1`` package name, so both copies register
the same files and share one set of message classes when a process imports both (tests do).

``--check`` regenerates into a temporary directory and exits 1 when a committed file differs
(the test suite runs the same comparison).
"""

from __future__ import annotations

import argparse
import filecmp
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROTO_ROOT = ROOT / "proto"
PROTO_DIR = PROTO_ROOT / "covr" / "v1"
_HEADER = '"""Generated from proto/covr/v1 by scripts/gen_proto.py; do not edit."""\n'


@dataclass(frozen=True)
class Target:
    """One committed copy of the stubs: its folder and the import name of that folder."""

    out_dir: Path
    package: str

    def rewrite(self, text: str) -> str:
        """Generated text with ``covr.v1`` module references pointing at :attr:`package`."""
        if self.package == "covr.v1":
            return text
        text = re.sub(
            r"^from covr\.v1 import (\w+_pb2)", rf"from {self.package} import \1", text, flags=re.M
        )
        return re.sub(r"\bcovr\.v1\.(\w+_pb2(?:_grpc)?)\b", rf"{self.package}.\1", text)


SERVER = Target(ROOT / "server" / "covr" / "v1", "covr.v1")
SDK = Target(ROOT / "clients" / "python" / "covr_client" / "_proto", "covr_client._proto")
TARGETS = (SERVER, SDK)
OUT_DIR = SDK.out_dir
"""The SDK's copy (kept as a name for callers that compare one folder)."""


def _protoc(raw: Path) -> Path:
    """Run protoc (grpcio-tools) with mypy-protobuf into ``raw``; returns the ``covr/v1`` folder."""
    protos = sorted(PROTO_DIR.glob("*.proto"))
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
    # protoc finds the mypy-protobuf plugins on PATH: those of this interpreter's environment.
    env_path = str(Path(sys.executable).parent)
    env = {**os.environ, "PATH": f"{env_path}:{os.environ.get('PATH', '')}"}
    subprocess.run(command, check=True, cwd=PROTO_ROOT, env=env)
    return raw / "covr" / "v1"


def generate(out_dir: Path, target: Target = SDK) -> list[Path]:
    """Generate the stubs of ``target`` (its import name) into ``out_dir``; the written files."""
    with tempfile.TemporaryDirectory() as raw:
        generated = _protoc(Path(raw))
        if out_dir.exists():
            shutil.rmtree(out_dir)
        out_dir.mkdir(parents=True)
        (out_dir / "__init__.py").write_text(_HEADER, encoding="utf-8")
        written = [out_dir / "__init__.py"]
        for path in sorted(generated.iterdir()):
            text = path.read_text(encoding="utf-8")
            if "_grpc" in path.name and "ServiceStub" not in text:
                continue  # files without a service: only imports, nothing to keep
            destination = out_dir / path.name
            destination.write_text(target.rewrite(text), encoding="utf-8")
            written.append(destination)
    return written


def differences(committed: Path = OUT_DIR, target: Target | None = None) -> list[str]:
    """Names of files that differ between a fresh generation and ``committed``.

    ``target`` defaults to the copy whose folder ``committed`` is (the SDK's for any other
    folder, e.g. a test's scratch copy).
    """
    chosen = target or next((t for t in TARGETS if t.out_dir == committed), SDK)
    with tempfile.TemporaryDirectory() as fresh_dir:
        fresh = Path(fresh_dir) / "stubs"
        generate(fresh, chosen)
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
        stale = [
            f"{t.out_dir.relative_to(ROOT)}/{name}"
            for t in TARGETS
            for name in differences(t.out_dir, t)
        ]
        if stale:
            print("generated stubs differ from proto/: " + ", ".join(stale), file=sys.stderr)
            print("run `make proto` and commit the result", file=sys.stderr)
            return 1
        print("generated stubs are up to date")
        return 0
    for target in TARGETS:
        for path in generate(target.out_dir, target):
            print(path.relative_to(ROOT))
    return 0


if __name__ == "__main__":
    sys.exit(main())
