"""tools/audit_deps.py reads pip-audit's JSON, never its summary line (issue 40 row 13).

pip-audit printed "No known vulnerabilities found" and exited 0 for 102 packages it could not
audit. The samples below were captured on this project's machine with pip-audit 2.10.1
(``-r requirements.txt --no-deps --disable-pip -s pypi|osv -f json``): with ``-s pypi`` every
package came back skipped; with ``-s osv`` the run failed on name resolution (the host in the
captured line is replaced by ``<host>``). The audited sample with a vulnerability follows
pip-audit's JSON format (no service answered here to capture one).
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]

PYPI_ALL_SKIPPED = (
    '{"dependencies": [{"name": "annotated-doc", "skip_reason": "Dependency not found on PyPI and '
    'could not be audited: annotated-doc (0.0.7)"}, {"name": "annotated-types", "skip_reason": '
    '"Dependency not found on PyPI and could not be audited: annotated-types (0.8.0)"}, {"name": '
    '"ast-serialize", "skip_reason": "Dependency not found on PyPI and could not be audited: '
    'ast-serialize (0.13.1)"}], "fixes": []}'
)
OSV_UNREACHABLE = """\
    raise ConnectionError(e, request=request)
requests.exceptions.ConnectionError: HTTPSConnectionPool(host='<host>', port=443): Max retries \
exceeded with url: /v1/query (Caused by NameResolutionError("HTTPSConnection(host='<host>', \
port=443): Failed to resolve '<host>' ([Errno -2] Name or service not known)"))
"""


@pytest.fixture(scope="module")
def audit() -> ModuleType:
    spec = importlib.util.spec_from_file_location("audit_deps", ROOT / "tools" / "audit_deps.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["audit_deps"] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


def test_every_package_skipped_is_said_and_nothing_is_claimed(audit: ModuleType) -> None:
    outcome = audit.summarize("pypi", 3, 0, PYPI_ALL_SKIPPED)
    assert (outcome.audited, outcome.skipped, outcome.complete) == (0, 3, False)
    lines = audit.message(outcome)
    assert lines == [
        "pip-audit could not audit 3 packages: Dependency not found on PyPI and could not be "
        "audited (3 of 3, service pypi)"
    ]
    assert not any("no known vulnerabilities" in line.lower() for line in lines)
    assert audit.exit_code(outcome, strict=False) == 0
    assert audit.exit_code(outcome, strict=True) == 3


def test_an_unreachable_service_is_a_reason_naming_no_host(audit: ModuleType) -> None:
    outcome = audit.summarize("osv", 108, 1, None, OSV_UNREACHABLE)
    (line,) = audit.message(outcome)
    assert line == (
        "pip-audit could not audit 108 packages: the osv service failed: ConnectionError "
        "(NameResolutionError): the service's host name does not resolve (exit 1)"
    )
    assert "<host>" not in line
    assert audit.summarize("osv", 2, 1, "not json", "").skipped == 2


def test_some_audited_some_not_claims_only_the_audited(audit: ModuleType) -> None:
    report = json.loads(PYPI_ALL_SKIPPED)
    report["dependencies"].append({"name": "six", "version": "1.16.0", "vulns": []})
    outcome = audit.summarize("pypi", 5, 0, json.dumps(report))
    # 3 skipped in the report, 1 requirement missing from it, 1 audited
    assert (outcome.audited, outcome.skipped) == (1, 4)
    lines = audit.message(outcome)
    assert lines[0].startswith("pip-audit could not audit 4 packages: ")
    assert "not in pip-audit's report (1 of 5, service pypi)" in lines[0]
    assert lines[1] == (
        "pip-audit: no known vulnerabilities in the 1 packages it could audit; "
        "the other 4 are unknown"
    )


def test_all_audited_is_the_only_clean_bill(audit: ModuleType) -> None:
    report = {
        "dependencies": [
            {"name": "six", "version": "1.16.0", "vulns": []},
            {"name": "idna", "version": "3.10", "vulns": []},
        ],
        "fixes": [],
    }
    outcome = audit.summarize("pypi", 2, 0, json.dumps(report))
    assert outcome.complete
    assert audit.message(outcome) == [
        "pip-audit: no known vulnerabilities in 2 packages (service pypi)"
    ]
    assert audit.exit_code(outcome, strict=True) == 0


def test_a_known_vulnerability_is_listed_and_fails(audit: ModuleType) -> None:
    report = {
        "dependencies": [
            {
                "name": "requests",
                "version": "2.19.0",
                "vulns": [{"id": "PYSEC-2018-28", "fix_versions": ["2.20.0"]}],
            },
            {"name": "six", "version": "1.16.0", "vulns": []},
        ],
        "fixes": [],
    }
    outcome = audit.summarize("pypi", 2, 1, json.dumps(report))
    assert audit.message(outcome) == [
        "pip-audit found 1 known vulnerabilities in 1 packages (of 2 audited)",
        "  requests 2.19.0: PYSEC-2018-28 (fixed in 2.20.0)",
    ]
    assert audit.exit_code(outcome, strict=False) == 1
