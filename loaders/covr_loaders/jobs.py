"""Command-line paths and the loaders' settings section -> one :class:`LoadJob` per dataset."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

from covr_loaders import gqa, imsitu, vg
from covr_loaders.config import LoadSettings
from covr_loaders.errors import InputFileError
from covr_loaders.jsonio import check_file
from covr_loaders.writer import LoadInput, LoadJob

BUNDLED_TEMPLATES = Path(__file__).parent / "samples" / "imsitu" / "generation_templates.tab"
"""The project's own imSitu verb templates, used when none are given."""


def _guards(settings: LoadSettings) -> dict[str, Any]:
    """The limits every job applies to what it reads (``COVR_LIMIT_*``, record size)."""
    return {
        "limits": settings.limits,
        "max_record_bytes": settings.load_max_record_bytes,
    }


def gqa_job(paths: list[Path], split: str, settings: LoadSettings) -> LoadJob:
    """GQA scene-graph files, read one after the other."""
    options = gqa.GqaOptions(keep_left_right=settings.load_gqa_left_right)
    for path in paths:
        check_file(path, "object")
    inputs = [
        LoadInput(
            str(p),
            [p],
            partial(lambda c, p: gqa.read(p, split=split, counter=c, options=options), p=p),
        )
        for p in paths
    ]
    return LoadJob(
        "gqa", split, inputs, {"keep_left_right": options.keep_left_right}, **_guards(settings)
    )


def imsitu_job(
    paths: list[Path],
    split: str,
    settings: LoadSettings,
    *,
    space: Path,
    templates: Path | None = None,
    nouns: Path | None = None,
) -> LoadJob:
    """imSitu files with their space file, templates (default: bundled) and extra nouns."""
    for path in paths:
        check_file(path, "object")
    configured = settings.load_imsitu_templates
    if configured is not None and str(configured) in ("", "."):
        configured = None  # an empty COVR_LOAD_IMSITU_TEMPLATES arrives as Path(".")
    templates = templates or configured or BUNDLED_TEMPLATES
    vocabulary = imsitu.load_space(space, templates, nouns)
    frame: imsitu.FrameChoice = "majority" if settings.load_imsitu_frame == "majority" else "first"
    options = imsitu.ImsituOptions(place_as_relmod=settings.load_imsitu_place, frame_choice=frame)
    inputs = [
        LoadInput(
            str(p),
            [p],
            partial(
                lambda c, p: imsitu.read(
                    p, split=split, counter=c, space=vocabulary, options=options
                ),
                p=p,
            ),
        )
        for p in paths
    ]
    extra = [q for q in (space, templates, nouns) if q is not None]
    return LoadJob(
        "imsitu",
        split,
        inputs,
        {
            "place": options.place_as_relmod,
            "frame": options.frame_choice,
            "vocabulary": [str(q.resolve()) for q in extra],
        },
        **_guards(settings),
    )


def vg_job(paths: list[Path], split: str, settings: LoadSettings) -> LoadJob:
    """``scene_graphs.json`` files, or ``objects.json`` with its ``attributes``/``relationships``."""
    split_files = {p.name: p for p in paths if p.name in vg.SPLIT_FILES}
    inputs: list[LoadInput] = []
    if split_files:
        if "objects.json" not in split_files:
            raise InputFileError(
                ", ".join(map(str, split_files.values())),
                "the split Visual Genome files need objects.json beside them",
            )
        for path in split_files.values():
            check_file(path, "array")
        group = [split_files[n] for n in vg.SPLIT_FILES if n in split_files]
        inputs.append(
            LoadInput(
                " + ".join(map(str, group)),
                group,
                lambda c: vg.read_split_files(split_files, split=split, counter=c),
            )
        )
    for path in paths:
        if path.name in vg.SPLIT_FILES:
            continue
        check_file(path, "array")
        inputs.append(
            LoadInput(
                str(path), [path], partial(lambda c, p: vg.read(p, split=split, counter=c), p=path)
            )
        )
    return LoadJob("vg", split, inputs, **_guards(settings))
