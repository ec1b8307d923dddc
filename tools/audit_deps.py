"""Known vulnerabilities of the installed dependencies (pip-audit), said honestly (issue 40 row 13).

pip-audit reports "No known vulnerabilities found" and exits 0 even when it audited nothing: a
package its vulnerability service does not answer for is only *skipped* ("Dependency not found
... could not be audited"), and the CI machines reach neither service (the package index's JSON
API answers 404 there, OSV's host does not resolve). So this step reads pip-audit's JSON, never
its summary line, and prints one of:

- ``pip-audit could not audit N packages: <reason>`` (some or all skipped, or the service
  unreachable): it then claims nothing about vulnerabilities;
- ``pip-audit found N known vulnerabilities in M packages`` and each one (exit 1);
- ``pip-audit: no known vulnerabilities in N packages (service S)``, only when every package
  was audited.

The services are tried in turn (``--service``, default ``pypi`` then ``osv``): the first that
audits every package decides; otherwise the one that audited most is reported. Exit codes: 1 for
a known vulnerability, 3 with ``--strict`` when a package could not be audited, else 0.

    .venv/bin/python tools/audit_deps.py [--pip-audit .venv-audit/bin/pip-audit] [--strict]
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SERVICES = ("pypi", "osv")
TIMEOUT_S = 600


@dataclass
class Outcome:
    """What one pip-audit run established."""

    service: str
    packages: int
    """requirements given to it."""
    audited: int = 0
    skipped: int = 0
    vulnerabilities: list[tuple[str, str, str, list[str]]] = field(default_factory=list)
    """(package, version, vulnerability id, fix versions)."""
    reason: str = ""
    """why packages were not audited (empty when all were)."""

    @property
    def complete(self) -> bool:
        return self.skipped == 0 and self.audited == self.packages and not self.reason


def _skip_reason(text: str) -> str:
    """A skip reason without its package (``...: name (1.0)``), so equal reasons group."""
    return re.sub(r":\s*\S+ \([^)]*\)\s*$", "", text).strip()


def _failure(stderr: str) -> str:
    """The last error line of a failed run (an exception's message), without URLs or hosts."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    errors = [line for line in lines if re.match(r"^[\w.]+(Error|Exception)\b", line)]
    line = (errors or lines or ["no output"])[-1]
    name = line.split(":", 1)[0].rsplit(".", 1)[-1]
    causes = re.findall(r"\b(\w+(?:Error|Exception))\b", line)
    cause = next((c for c in reversed(causes) if c != name), "")
    if "Failed to resolve" in line or "Name or service not known" in line:
        detail = "the service's host name does not resolve"
    elif "timed out" in line.lower():
        detail = "timed out"
    elif "Connection refused" in line:
        detail = "connection refused"
    else:
        detail = re.sub(r"\w+://\S+|host='[^']*'", "<address>", line.split(":", 1)[-1]).strip()
        detail = detail[:200]
    return f"{name}{f' ({cause})' if cause else ''}: {detail}"


def summarize(
    service: str, packages: int, returncode: int, report: str | None, stderr: str = ""
) -> Outcome:
    """One pip-audit run (``-f json``) as an :class:`Outcome`: its JSON report when it wrote one,
    else its failure (network, bad input) from stderr."""
    out = Outcome(service=service, packages=packages)
    data: Any = None
    if report:
        try:
            data = json.loads(report)
        except ValueError:
            data = None
    if not isinstance(data, dict) or not isinstance(data.get("dependencies"), list):
        out.skipped = packages
        out.reason = f"the {service} service failed: {_failure(stderr)} (exit {returncode})"
        return out
    reasons: Counter[str] = Counter()
    for dep in data["dependencies"]:
        if "skip_reason" in dep:
            out.skipped += 1
            reasons[_skip_reason(str(dep["skip_reason"]))] += 1
            continue
        out.audited += 1
        for vuln in dep.get("vulns", []):
            fixes = [str(v) for v in vuln.get("fix_versions", [])]
            out.vulnerabilities.append((dep["name"], dep.get("version", "?"), vuln["id"], fixes))
    missing = packages - out.audited - out.skipped
    if missing > 0:  # pip-audit left some requirement out of its report
        out.skipped += missing
        reasons["not in pip-audit's report"] += missing
    if reasons:
        out.reason = "; ".join(
            f"{text} ({count} of {packages}, service {service})"
            for text, count in reasons.most_common()
        )
    return out


def message(outcome: Outcome) -> list[str]:
    """The lines the step prints: never "no known vulnerabilities" unless all were audited."""
    lines: list[str] = []
    if outcome.skipped:
        lines.append(f"pip-audit could not audit {outcome.skipped} packages: {outcome.reason}")
    if outcome.vulnerabilities:
        names = {v[0] for v in outcome.vulnerabilities}
        lines.append(
            f"pip-audit found {len(outcome.vulnerabilities)} known vulnerabilities in "
            f"{len(names)} packages (of {outcome.audited} audited)"
        )
        for name, version, vuln, fixes in outcome.vulnerabilities:
            fixed = f"fixed in {', '.join(fixes)}" if fixes else "no fixed version"
            lines.append(f"  {name} {version}: {vuln} ({fixed})")
    elif outcome.complete:
        lines.append(
            f"pip-audit: no known vulnerabilities in {outcome.audited} packages "
            f"(service {outcome.service})"
        )
    elif outcome.audited:
        lines.append(
            f"pip-audit: no known vulnerabilities in the {outcome.audited} packages it could "
            f"audit; the other {outcome.skipped} are unknown"
        )
    return lines


def exit_code(outcome: Outcome, strict: bool) -> int:
    if outcome.vulnerabilities:
        return 1
    if strict and not outcome.complete:
        return 3
    return 0


def freeze(python: Path) -> list[str]:
    """The installed distributions of an environment as pinned requirements (editables left
    out: the project itself is not on the index)."""
    done = subprocess.run(
        [str(python), "-m", "pip", "freeze", "--exclude-editable"],
        capture_output=True,
        text=True,
        check=True,
    )
    return [
        line
        for line in done.stdout.splitlines()
        if line and not line.startswith(("#", "-e ")) and "==" in line
    ]


def run_pip_audit(pip_audit: Sequence[str], requirements: Path, service: str) -> Outcome:
    packages = sum(1 for line in requirements.read_text().splitlines() if "==" in line)
    with tempfile.TemporaryDirectory(prefix="covr-audit-") as tmp:
        out = Path(tmp) / "report.json"
        command = [
            *pip_audit,
            "-r", str(requirements), "--no-deps", "--disable-pip",
            "-s", service, "-f", "json", "-o", str(out),
            "--progress-spinner", "off", "--timeout", "30",
        ]  # fmt: skip
        try:
            done = subprocess.run(
                command, capture_output=True, text=True, timeout=TIMEOUT_S, check=False
            )
        except FileNotFoundError:
            return summarize(service, packages, 127, None, f"OSError: {pip_audit[0]} not found")
        except subprocess.TimeoutExpired:
            return summarize(
                service, packages, -1, None, f"TimeoutError: timed out ({TIMEOUT_S} s)"
            )
        report = out.read_text() if out.exists() else None
        return summarize(service, packages, done.returncode, report, done.stderr)


def default_pip_audit() -> list[str]:
    for candidate in (ROOT / ".venv-audit" / "bin" / "pip-audit", shutil.which("pip-audit")):
        if candidate and Path(candidate).exists():
            return [str(candidate)]
    return [sys.executable, "-m", "pip_audit"]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--pip-audit", help="the pip-audit command (default: .venv-audit's)")
    parser.add_argument("--python", type=Path, default=ROOT / ".venv" / "bin" / "python")
    parser.add_argument("-r", "--requirements", type=Path, help="audit this file, not --python's")
    parser.add_argument("--service", action="append", choices=SERVICES, default=None)
    parser.add_argument("--strict", action="store_true", help="exit 3 when not all were audited")
    args = parser.parse_args(argv)
    pip_audit = [args.pip_audit] if args.pip_audit else default_pip_audit()
    with tempfile.TemporaryDirectory(prefix="covr-audit-req-") as tmp:
        requirements = args.requirements
        if requirements is None:
            requirements = Path(tmp) / "requirements.txt"
            requirements.write_text("\n".join(freeze(args.python)) + "\n")
        outcomes: list[Outcome] = []
        for service in args.service or SERVICES:
            outcomes.append(run_pip_audit(pip_audit, requirements, service))
            if outcomes[-1].complete or outcomes[-1].vulnerabilities:
                break
    best = max(outcomes, key=lambda o: (o.complete, o.audited))
    if not best.complete:  # what each service said, so the log shows every source tried
        for other in outcomes:
            if other is not best and other.reason:
                print(f"pip-audit ({other.service}): {other.reason}")
    for line in message(best):
        print(line)
    return exit_code(best, args.strict)


if __name__ == "__main__":
    sys.exit(main())
