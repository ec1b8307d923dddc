"""Drawing one generated example: question, answer, program tree and each image with its role.

The pieces (:func:`program_svg`, :func:`image_panel_svg`) are used on their own by the browser's
HTML pages and composed into one SVG document by :func:`example_svg` for ``covr render --example``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from covr.questions.example import ExampleRecord
from covr.scene.model import SceneGraph
from covr.view.roles import ImageRole, image_roles
from covr.view.scene_svg import scene_svg
from covr.view.svg import COLORS, FONT, esc, fmt, label_width, truncate

PhotoLookup = Callable[[str], str | None]
"""Image id -> an ``href`` for its photo (URL or ``data:`` URI), or None for a neutral canvas."""

ROLE_COLORS = {
    "source": "#1f77b4",
    "positive": "#2ca02c",
    "distractor": COLORS["substituted"],
    "other": "#7f7f7f",
}


def role_color(role: str) -> str:
    return ROLE_COLORS.get(role.split(":", 1)[0], ROLE_COLORS["other"])


# -- program tree ------------------------------------------------------------------------------


@dataclass
class _Step:
    key: str
    label: str
    children: list[tuple[str, bool]]  # (child key, dashed: a nested program's result)


def _arg_text(value: Any) -> str:
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        return "…"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _flatten(
    program: Sequence[Any], prefix: str, steps: dict[str, _Step], outer: str | None
) -> str:
    """Add ``program``'s steps to ``steps``; return the key of its last (result) step."""
    last = ""
    for i, raw in enumerate(program):
        step = raw if isinstance(raw, Mapping) else {}
        key = f"{prefix}{i}"
        args = step.get("arguments") or []
        op = str(step.get("operation", "?"))
        label = op + (f" {', '.join(_arg_text(a) for a in args)}" if args else "")
        children: list[tuple[str, bool]] = []
        for dep in step.get("dependencies") or []:
            if isinstance(dep, int) and dep == -1:
                item = f"{key}.item"
                steps[item] = _Step(item, "each item", [(outer, True)] if outer else [])
                children.append((item, False))
            elif isinstance(dep, int) and 0 <= dep < len(program):
                children.append((f"{prefix}{dep}", False))
        for j, arg in enumerate(args):
            if isinstance(arg, list) and arg and all(isinstance(v, Mapping) for v in arg):
                nested_outer = children[0][0] if children else None
                result = _flatten(arg, f"{key}.{j}.", steps, nested_outer)
                children.append((result, True))
        steps[key] = _Step(key, truncate(label, 34), children)
        last = key
    return last


def program_svg(program: Sequence[Any], *, font: float = 11.0) -> str:
    """The program as a tree (result at the top, inputs below) in one SVG document.

    Steps are placed in layers by their longest distance from the result; a nested program (the
    argument of ``all``/``some``/``none``) hangs off its step with a dashed edge.
    """
    steps: dict[str, _Step] = {}
    root = _flatten(program, "", steps, None) if program else ""
    if not root:
        return (
            f'<svg xmlns="http://www.w3.org/2000/svg" class="program" width="200" height="30" '
            f'font-family="{FONT}"><text x="4" y="18" font-size="{fmt(font)}">(no program)</text>'
            "</svg>"
        )
    depth: dict[str, int] = {root: 0}
    order = [root]
    for _ in range(len(steps) + 1):  # longest-path layering (the program is a DAG)
        changed = False
        for key in list(order):
            for child, _dashed in steps[key].children:
                if child not in steps:
                    continue
                if depth.get(child, -1) < depth[key] + 1:
                    depth[child] = depth[key] + 1
                    changed = True
                    if child not in order:
                        order.append(child)
        if not changed:
            break
    layers: dict[int, list[str]] = {}
    for key in order:
        layers.setdefault(depth[key], []).append(key)
    width_of = {k: label_width(steps[k].label, font) + 14 for k in order}
    row_h, gap = font + 12, 16.0
    total_w = max(sum(width_of[k] + gap for k in layer) for layer in layers.values()) + gap
    total_h = len(layers) * (row_h + 18) + 10
    pos: dict[str, tuple[float, float]] = {}
    for level, layer in layers.items():
        used = sum(width_of[k] + gap for k in layer) - gap
        x = (total_w - used) / 2
        for key in layer:
            pos[key] = (x + width_of[key] / 2, 8 + level * (row_h + 18) + row_h / 2)
            x += width_of[key] + gap
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="program" width="{fmt(total_w)}" '
        f'height="{fmt(total_h)}" viewBox="0 0 {fmt(total_w)} {fmt(total_h)}" '
        f'font-family="{FONT}">'
    ]
    for key in order:
        for child, dashed in steps[key].children:
            if child not in pos:
                continue
            (x1, y1), (x2, y2) = pos[key], pos[child]
            dash = ' stroke-dasharray="4 3"' if dashed else ""
            out.append(
                f'<line x1="{fmt(x1)}" y1="{fmt(y1 + row_h / 2)}" x2="{fmt(x2)}" '
                f'y2="{fmt(y2 - row_h / 2)}" stroke="{COLORS["edge"]}"{dash}/>'
            )
    for key in order:
        x, y = pos[key]
        w = width_of[key]
        is_root = key == root
        out.append(
            f'<g class="step" data-step="{esc(key)}"><rect x="{fmt(x - w / 2)}" '
            f'y="{fmt(y - row_h / 2)}" width="{fmt(w)}" height="{fmt(row_h)}" rx="4" '
            f'fill="{"#fff3c4" if is_root else "#f4f6f8"}" stroke="#8a96a3"/>'
            f'<text x="{fmt(x)}" y="{fmt(y + font / 2 - 1)}" text-anchor="middle" '
            f'font-size="{fmt(font)}" fill="#222">{esc(steps[key].label)}</text></g>'
        )
    out.append("</svg>")
    return "".join(out)


# -- images ------------------------------------------------------------------------------------


def image_panel_svg(
    role: ImageRole, scene: SceneGraph | None, photo: str | None = None, *, titled: bool = True
) -> str:
    """One image of an example: the scene drawing titled with its role, or a placeholder."""
    title = f"{role.image_id} — {role.label}"
    if scene is None:
        return (
            f'<svg xmlns="http://www.w3.org/2000/svg" class="covr-scene missing" '
            f'data-image-id="{esc(role.image_id)}" data-role="{esc(role.role)}" width="810" '
            f'height="60" font-family="{FONT}"><rect width="810" height="60" fill="#fff4f4" '
            f'stroke="#d62728"/><text x="10" y="34" font-size="13">{esc(title)}</text></svg>'
        )
    svg = scene_svg(scene, marks=role.marks, photo_href=photo, title=title if titled else "")
    # the role goes on the root element so pages and tests can select images by role
    return svg.replace(
        'class="covr-scene" ',
        f'class="covr-scene role-{esc(role.role.split(":", 1)[0])}" data-role="{esc(role.role)}" ',
        1,
    )


def answer_text(answer: Any) -> str:
    if isinstance(answer, bool):
        return "yes" if answer else "no"
    return str(answer)


def example_svg(
    example: ExampleRecord,
    scenes: Mapping[str, SceneGraph | None],
    photos: PhotoLookup | None = None,
) -> str:
    """The whole example as one SVG document (``covr render --example``)."""
    roles = image_roles(example, scenes)
    question = str(example.get("utterance", ""))
    meta = " · ".join(
        str(x)
        for x in (
            example.get("qid"),
            example.get("template"),
            example.get("paper_template"),
            ", ".join(example.get("properties") or []) or None,
        )
        if x
    )
    program = program_svg(example.get("program") or [])
    program_w, program_h = _size(program)
    panels = [
        image_panel_svg(r, scenes.get(r.image_id), photos(r.image_id) if photos else None)
        for r in roles
    ]
    sizes = [_size(p) for p in panels]
    cols = 2 if len(panels) > 1 else 1
    col_w = max((w for w, _ in sizes), default=0.0)
    width = max(col_w * cols + 10 * (cols + 1), program_w + 20, 600.0)
    head = 70.0
    out: list[str] = []
    y = head
    out.append(
        f'<svg x="10" y="{fmt(y)}" width="{fmt(program_w)}" height="{fmt(program_h)}">'
        f"{_inner(program)}</svg>"
    )
    y += program_h + 10
    row_h = 0.0
    for i, (panel, (w, h)) in enumerate(zip(panels, sizes, strict=True)):
        col = i % cols
        if col == 0 and i:
            y += row_h + 10
            row_h = 0.0
        x = 10 + col * (col_w + 10)
        out.append(
            f'<g transform="translate({fmt(x)},{fmt(y)})">'
            f'<rect x="-3" y="-3" width="{fmt(w + 6)}" height="{fmt(h + 6)}" fill="none" '
            f'stroke="{role_color(roles[i].role)}" stroke-width="3"/>{_as_group(panel)}</g>'
        )
        row_h = max(row_h, h)
    height = y + row_h + 10
    header = (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="covr-example" '
        f'data-qid="{esc(example.get("qid", ""))}" width="{fmt(width)}" height="{fmt(height)}" '
        f'viewBox="0 0 {fmt(width)} {fmt(height)}" font-family="{FONT}">'
        f'<rect width="{fmt(width)}" height="{fmt(height)}" fill="#fff"/>'
        f'<text x="10" y="24" font-size="17" font-weight="bold" fill="#111">{esc(question)}</text>'
        f'<text x="10" y="46" font-size="14" fill="#111">answer: '
        f'<tspan font-weight="bold">{esc(answer_text(example.get("answer")))}</tspan></text>'
        f'<text x="10" y="62" font-size="11" fill="#555">{esc(meta)}</text>'
    )
    return header + "".join(out) + "</svg>"


def _size(svg: str) -> tuple[float, float]:
    """``width``/``height`` of a document made by this room (first occurrence)."""
    import re

    w = re.search(r'width="([0-9.]+)"', svg)
    h = re.search(r'height="([0-9.]+)"', svg)
    return (float(w.group(1)) if w else 0.0, float(h.group(1)) if h else 0.0)


def _inner(svg: str) -> str:
    """The content of an ``<svg>`` document (drops the root element)."""
    start = svg.index(">") + 1
    return svg[start : svg.rindex("</svg>")]


def _as_group(svg: str) -> str:
    """A standalone scene drawing as a nested ``<svg>`` (keeps its class and data attributes)."""
    return svg.replace(' xmlns="http://www.w3.org/2000/svg"', "", 1)
