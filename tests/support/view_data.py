"""Real generated examples for the view tests: the question engine over the bundled samples.

Generated in memory (``InMemoryRelated``) so unit tests need no store; the integration tests
write the same scene graphs into the embedded store and read them back through the CLI's path.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from covr.questions.generate import GenerationOptions, generate
from covr.related.memory import InMemoryRelated
from covr.scene.model import SceneGraph
from tests.support.question_data import bundled_samples


@cache
def sample_scenes() -> tuple[SceneGraph, ...]:
    """Every bundled sample scene graph (GQA val, imSitu dev, VG train)."""
    return tuple(g for graphs in bundled_samples().values() for g in graphs)


@cache
def sample_examples() -> tuple[dict[str, Any], ...]:
    """Examples generated for the GQA val samples (deterministic: seed 0)."""
    graphs = bundled_samples()["val"]
    options = GenerationOptions(split="val", seed=0, subgraphs_per_image=6)
    ids = [g.image_id for g in graphs]
    return tuple(generate(InMemoryRelated(graphs), options, ids))


def write_examples(path: Path, examples: tuple[dict[str, Any], ...] | None = None) -> Path:
    """The examples as a JSONL file (one compact object per line)."""
    rows = examples if examples is not None else sample_examples()
    path.write_text("".join(json.dumps(e) + "\n" for e in rows), encoding="utf-8")
    return path
