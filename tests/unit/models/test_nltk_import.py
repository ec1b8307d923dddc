"""nltk is imported for its WordNet reader only: scipy and scikit-learn, which nltk imports when
they are installed (the training extra), stay out of a process that opens WordNet, unless the
process imported them itself. Each case runs in a fresh interpreter: the test process has its
own imports."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytestmark = pytest.mark.unit

_PROBE = """
import json, sys
{before}
from covr.models.wordnet import _import_nltk
_import_nltk()
import nltk.corpus.reader.wordnet as reader
from nltk.metrics import association
print(json.dumps({{
    "nltk": "nltk" in sys.modules,
    "scipy": "scipy" in sys.modules,
    "sklearn": "sklearn" in sys.modules,
    "reader": hasattr(reader, "WordNetCorpusReader"),
    "fisher_from_scipy": getattr(association.fisher_exact, "__module__", "").startswith("scipy"),
    "hidden_left": any(type(f).__name__ == "_HideFromNltk" for f in sys.meta_path),
}}))
"""


def _probe(before: str = "") -> dict[str, bool]:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE.format(before=before)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, bool] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_wordnet_without_scipy_and_scikit_learn() -> None:
    pytest.importorskip("scipy")  # without them there is nothing to keep out
    found = _probe()
    assert found["nltk"]
    assert found["reader"]
    assert not found["scipy"]
    assert not found["sklearn"]
    assert not found["hidden_left"]  # the import hook is gone afterwards


def test_a_process_that_imported_scipy_keeps_nltk_whole() -> None:
    pytest.importorskip("scipy")
    found = _probe("import scipy.stats")
    assert found["scipy"]
    assert found["fisher_from_scipy"]  # nltk saw scipy: nothing was hidden from it
    assert not found["hidden_left"]
