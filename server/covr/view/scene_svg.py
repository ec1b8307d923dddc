"""Drawing one scene graph as SVG: the image's boxes on its canvas, and the graph beside it.

Left panel: a nested ``<svg>`` whose ``viewBox`` is the image's own pixel space, so each object's
``<rect>`` carries the annotation's coordinates exactly (tests and readers can check them); the
photo goes underneath when one is given, a neutral canvas otherwise. Right panel: the scene graph
itself — objects, attributes, relations and rel-mods as labelled nodes.

Layout (measured; docs/view.md): objects start at their box centres so the graph looks like the
picture, attributes and relations start next to what they describe, then overlapping labels are
pushed apart (a vectorized numpy pass over all pairs). networkx's ``spring_layout`` from the same
start was measured at ~9 ms per sample image for 20 iterations (its per-call set-up dominates on
graphs this small), 55 ms for a five-image example, over the 50 ms budget, and it forgets the
picture's geometry; Graphviz would add a system binary and a subprocess per drawing.

Marks: a :class:`Marks` names the nodes of the queried subgraph's match (red) and the nodes a
distractor's edit substituted (purple, dashed); both the box and the graph node get the class
``match`` / ``substituted`` and ``data-*`` attributes so tests can find them without a browser.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from covr.scene.model import SceneGraph
from covr.view.svg import COLORS, FONT, esc, fmt, label_width, truncate

LAYOUT_ITERATIONS = 20
"""Overlap-removal rounds after the box-based start (most scenes settle in fewer)."""


@dataclass(frozen=True)
class NodeSet:
    """Scene-graph nodes by their ids in the scene: objects, attributes ``(object id, name)``,
    relations, and rel-mods ``(relation id, rel-mod id)``."""

    objects: frozenset[str] = frozenset()
    attributes: frozenset[tuple[str, str]] = frozenset()
    relations: frozenset[str] = frozenset()
    relmods: frozenset[tuple[str, str]] = frozenset()

    def __bool__(self) -> bool:
        return bool(self.objects or self.attributes or self.relations or self.relmods)

    def union(self, other: NodeSet) -> NodeSet:
        return NodeSet(
            self.objects | other.objects,
            self.attributes | other.attributes,
            self.relations | other.relations,
            self.relmods | other.relmods,
        )


@dataclass(frozen=True)
class Marks:
    """What to emphasize in one drawing: the matched subgraph and the substituted nodes."""

    match: NodeSet = field(default_factory=NodeSet)
    substituted: NodeSet = field(default_factory=NodeSet)


def _node_ids(scene: SceneGraph) -> tuple[list[tuple[str, str, str]], list[tuple[str, str]]]:
    """Graph nodes ``(node id, kind, label)`` and edges ``(from, to)`` of ``scene``."""
    nodes: list[tuple[str, str, str]] = []
    edges: list[tuple[str, str]] = []
    known = {o.id for o in scene.objects}
    for obj in scene.objects:
        nodes.append((f"o:{obj.id}", "object", obj.name))
        for attribute in dict.fromkeys(obj.attributes):
            node = f"a:{obj.id}:{attribute}"
            nodes.append((node, "attribute", attribute))
            edges.append((f"o:{obj.id}", node))
    for rel in scene.relations:
        if rel.subject not in known or rel.object not in known:
            continue
        node = f"r:{rel.id}"
        nodes.append((node, "relation", rel.name))
        edges.append((f"o:{rel.subject}", node))
        edges.append((node, f"o:{rel.object}"))
        for mod in rel.mods:
            if mod.object not in known:
                continue
            mod_node = f"m:{rel.id}:{mod.id}"
            nodes.append((mod_node, "relmod", mod.name))
            edges.append((node, mod_node))
            edges.append((mod_node, f"o:{mod.object}"))
    return nodes, edges


def _start_positions(scene: SceneGraph) -> dict[str, tuple[float, float]]:
    """Initial positions in [0, 1]²: objects at box centres (or on a circle), parts beside them."""
    import math

    width = float(scene.width or 0) or max(
        (float(o.box.x) + float(o.box.w) for o in scene.objects if o.box), default=1.0
    )
    height = float(scene.height or 0) or max(
        (float(o.box.y) + float(o.box.h) for o in scene.objects if o.box), default=1.0
    )
    pos: dict[str, tuple[float, float]] = {}
    n = max(1, len(scene.objects))
    for i, obj in enumerate(scene.objects):
        if obj.box is not None and width > 0 and height > 0:
            x = (float(obj.box.x) + float(obj.box.w) / 2) / width
            y = (float(obj.box.y) + float(obj.box.h) / 2) / height
        else:
            angle = 2 * math.pi * i / n
            x, y = 0.5 + 0.4 * math.cos(angle), 0.5 + 0.4 * math.sin(angle)
        # a deterministic jitter keeps objects with the same box apart
        pos[f"o:{obj.id}"] = (x + 0.013 * (i % 7), y + 0.011 * (i % 5))
        for j, attribute in enumerate(dict.fromkeys(obj.attributes)):
            pos[f"a:{obj.id}:{attribute}"] = (x + 0.06 + 0.02 * j, y - 0.06 - 0.03 * j)
    for rel in scene.relations:
        a, b = pos.get(f"o:{rel.subject}"), pos.get(f"o:{rel.object}")
        if a is None or b is None:
            continue
        mid = ((a[0] + b[0]) / 2 + 0.01, (a[1] + b[1]) / 2 + 0.01)
        pos[f"r:{rel.id}"] = mid
        for k, mod in enumerate(rel.mods):
            target = pos.get(f"o:{mod.object}")
            if target is not None:
                pos[f"m:{rel.id}:{mod.id}"] = (
                    (mid[0] + target[0]) / 2 + 0.01 * k,
                    (mid[1] + target[1]) / 2,
                )
    return pos


def graph_layout(
    scene: SceneGraph,
    width: float,
    height: float,
    *,
    font: float = 10.0,
    iterations: int = LAYOUT_ITERATIONS,
) -> dict[str, tuple[float, float]]:
    """Node centres in panel units (deterministic for a given scene); see the module docstring.

    Starts from :func:`_start_positions` scaled into the panel, then pushes overlapping labels
    apart along the axis where they overlap least, all pairs at once with numpy.
    """
    import numpy as np

    nodes, _ = _node_ids(scene)
    if not nodes:
        return {}
    start = _start_positions(scene)
    pad_x, pad_y = 48.0, 14.0
    raw = np.array([start[n] for n, _, _ in nodes], dtype=float)
    lo, hi = raw.min(axis=0), raw.max(axis=0)
    span = np.where(hi - lo > 0, hi - lo, 1.0)
    box = np.array([width - 2 * pad_x, height - 2 * pad_y])
    pos = np.array([pad_x, pad_y]) + (raw - lo) / span * box
    half = np.array(
        [
            [(label_width(truncate(label, 18), font) + 10) / 2, (font + 7) / 2]
            for _, _, label in nodes
        ]
    )
    n = len(nodes)
    xs, ys = pos[:, 0].copy(), pos[:, 1].copy()
    if n > 1 and iterations > 0:
        gap = 3.0
        # breaks ties between nodes at the same place: i is pushed left/up of j when i < j
        tie = np.where(np.arange(n)[:, None] < np.arange(n)[None, :], -1e-6, 1e-6)
        reach_x = half[:, 0][:, None] + half[:, 0][None, :] + gap
        reach_y = half[:, 1][:, None] + half[:, 1][None, :] + gap
        np.fill_diagonal(reach_x, -1.0)  # a node never overlaps itself
        lo_x, lo_y = half[:, 0] + 2.0, half[:, 1] + 2.0
        hi_x = np.maximum(lo_x, width - half[:, 0] - 2.0)
        hi_y = np.maximum(lo_y, height - half[:, 1] - 2.0)
        for _ in range(iterations):
            dx = xs[:, None] - xs[None, :] + tie
            dy = ys[:, None] - ys[None, :] + tie
            over_x = reach_x - np.abs(dx)
            over_y = reach_y - np.abs(dy)
            hit = np.minimum(over_x, over_y) > 0
            if not hit.any():
                break
            along_x = hit & (over_x * 0.6 < over_y)
            push_x = (np.copysign(over_x, dx) * along_x).sum(axis=1)
            push_y = (np.copysign(over_y, dy) * (hit & ~along_x)).sum(axis=1)
            # np.minimum/np.maximum: np.clip's Python wrapper cost more than the pass itself
            xs = np.minimum(np.maximum(xs + push_x * 0.3, lo_x), hi_x)
            ys = np.minimum(np.maximum(ys + push_y * 0.3, lo_y), hi_y)
    return {node: (float(x), float(y)) for (node, _, _), x, y in zip(nodes, xs, ys, strict=True)}


def _object_classes(obj_id: str, marks: Marks) -> str:
    classes = []
    if obj_id in marks.match.objects:
        classes.append("match")
    if obj_id in marks.substituted.objects:
        classes.append("substituted")
    return " ".join(classes)


def scene_svg(
    scene: SceneGraph,
    *,
    marks: Marks | None = None,
    photo_href: str | None = None,
    title: str | None = None,
    panel_width: float = 340,
    panel_height: float = 260,
    graph_width: float = 440,
    layout_iterations: int = LAYOUT_ITERATIONS,
    standalone: bool = True,
) -> str:
    """One scene graph as an SVG document (or fragment with ``standalone=False``).

    ``photo_href`` is drawn under the boxes (a URL or ``data:`` URI); ``title`` is written above
    the panels (the image id by default; ``""`` for none, when the page has its own caption).
    """
    marks = marks or Marks()
    parts: list[str] = []
    header = title if title is not None else scene.image_id
    head = 22.0 if header else 4.0
    total_w = panel_width + graph_width + 30
    total_h = panel_height + head + 12
    if standalone:
        parts.append(
            f'<svg xmlns="http://www.w3.org/2000/svg" class="covr-scene" '
            f'data-image-id="{esc(scene.image_id)}" width="{fmt(total_w)}" '
            f'height="{fmt(total_h)}" viewBox="0 0 {fmt(total_w)} {fmt(total_h)}" '
            f'font-family="{FONT}">'
        )
    else:
        parts.append(
            f'<g class="covr-scene" data-image-id="{esc(scene.image_id)}" font-family="{FONT}">'
        )
    parts.append(f'<rect width="{fmt(total_w)}" height="{fmt(total_h)}" fill="#ffffff"/>')
    if header:
        parts.append(
            f'<text x="10" y="16" font-size="13" font-weight="bold" fill="#222">{esc(header)}</text>'
        )
    parts.append(_boxes_panel(scene, marks, photo_href, 10, head, panel_width, panel_height))
    parts.append(
        _graph_panel(
            scene,
            marks,
            panel_width + 20,
            head,
            graph_width,
            panel_height,
            layout_iterations,
        )
    )
    parts.append("</svg>" if standalone else "</g>")
    return "".join(parts)


def _boxes_panel(
    scene: SceneGraph,
    marks: Marks,
    photo_href: str | None,
    x: float,
    y: float,
    width: float,
    height: float,
) -> str:
    """The image canvas with one ``rect.box`` per object, in image pixel coordinates."""
    img_w = float(scene.width or 0) or max(
        (float(o.box.x) + float(o.box.w) for o in scene.objects if o.box), default=100.0
    )
    img_h = float(scene.height or 0) or max(
        (float(o.box.y) + float(o.box.h) for o in scene.objects if o.box), default=100.0
    )
    img_w, img_h = max(img_w, 1.0), max(img_h, 1.0)
    unit = max(img_w, img_h) / 300.0  # one screen pixel in image units (approximately)
    out = [
        f'<svg class="boxes" x="{fmt(x)}" y="{fmt(y)}" width="{fmt(width)}" '
        f'height="{fmt(height)}" viewBox="0 0 {fmt(img_w)} {fmt(img_h)}" '
        f'preserveAspectRatio="xMidYMid meet">'
    ]
    out.append(
        f'<rect class="canvas" width="{fmt(img_w)}" height="{fmt(img_h)}" '
        f'fill="{COLORS["canvas"]}" stroke="#c5ccd3" stroke-width="{fmt(unit)}"/>'
    )
    if photo_href:
        out.append(
            f'<image class="photo" href="{esc(photo_href)}" width="{fmt(img_w)}" '
            f'height="{fmt(img_h)}" preserveAspectRatio="none"/>'
        )
    # marked boxes last so they are drawn on top
    ordered = sorted(
        (o for o in scene.objects if o.box is not None),
        key=lambda o: (o.id in marks.match.objects or o.id in marks.substituted.objects,),
    )
    for obj in ordered:
        box = obj.box
        assert box is not None
        classes = _object_classes(obj.id, marks)
        if "substituted" in classes:
            dashes = f' stroke-dasharray="{fmt(6 * unit)} {fmt(3 * unit)}"'
            color, width_px, dash = COLORS["substituted"], 3.0, dashes
        elif "match" in classes:
            color, width_px, dash = COLORS["match"], 3.0, ""
        else:
            color, width_px, dash = COLORS["box"], 1.2, ""
        box_class = f"box {classes}".strip()
        label = truncate(obj.name, 22)
        font = 11 * unit
        out.append(
            f'<g class="object"><title>{esc(obj.name)} [{esc(obj.id)}]'
            f"{(': ' + esc(', '.join(obj.attributes))) if obj.attributes else ''}</title>"
            f'<rect class="{box_class}" data-object-id="{esc(obj.id)}" '
            f'x="{fmt(box.x)}" y="{fmt(box.y)}" width="{fmt(box.w)}" height="{fmt(box.h)}" '
            f'fill="none" stroke="{color}" stroke-width="{fmt(width_px * unit)}"{dash}/>'
            f'<rect x="{fmt(box.x)}" y="{fmt(float(box.y))}" '
            f'width="{fmt(label_width(label, font) + 4 * unit)}" height="{fmt(font * 1.3)}" '
            f'fill="{color}" opacity="0.8"/>'
            f'<text x="{fmt(float(box.x) + 2 * unit)}" y="{fmt(float(box.y) + font)}" '
            f'font-size="{fmt(font)}" fill="#fff">{esc(label)}</text></g>'
        )
    out.append("</svg>")
    return "".join(out)


def _graph_panel(
    scene: SceneGraph,
    marks: Marks,
    x: float,
    y: float,
    width: float,
    height: float,
    iterations: int,
) -> str:
    """The scene graph as labelled nodes and arrows, laid out by :func:`graph_layout`."""
    nodes, edges = _node_ids(scene)
    out = [
        f'<g class="graph" transform="translate({fmt(x)},{fmt(y)})">'
        f'<rect width="{fmt(width)}" height="{fmt(height)}" fill="#fafbfc" stroke="#dde2e6"/>'
    ]
    if not nodes:
        out.append(
            f'<text x="{fmt(width / 2)}" y="{fmt(height / 2)}" text-anchor="middle" '
            f'font-size="12" fill="#666">no objects</text></g>'
        )
        return "".join(out)
    font = 10.0
    screen = graph_layout(scene, width, height, font=font, iterations=iterations)
    matched = _marked_nodes(marks.match)
    substituted = _marked_nodes(marks.substituted)
    half = {n: ((label_width(truncate(t, 18), font) + 10) / 2, (font + 7) / 2) for n, _, t in nodes}
    out.append('<g class="edges">')
    for a, b in edges:
        (x1, y1), (x2, y2) = screen[a], screen[b]
        arrow = ""
        if b.startswith("o:") and (x1, y1) != (x2, y2):
            # relation/rel-mod -> its object: stop at the object's label and draw the head there
            hw, hh = half[b]
            dx, dy = x1 - x2, y1 - y2
            t = min(hw / abs(dx) if dx else float("inf"), hh / abs(dy) if dy else float("inf"))
            x2, y2 = x2 + dx * min(t, 1.0), y2 + dy * min(t, 1.0)
            length = max((dx * dx + dy * dy) ** 0.5, 1e-9)
            ux, uy = dx / length, dy / length
            bx, by = x2 + ux * 6, y2 + uy * 6
            arrow = (
                f'<polygon class="head" points="{fmt(x2)},{fmt(y2)} {fmt(bx - uy * 3)},'
                f'{fmt(by + ux * 3)} {fmt(bx + uy * 3)},{fmt(by - ux * 3)}" fill="{{color}}"/>'
            )
        hot = a in matched and b in matched
        sub = (
            (a in substituted or b in substituted)
            and (a in matched or a in substituted)
            and (b in matched or b in substituted)
        )
        color = COLORS["substituted"] if sub else COLORS["match"] if hot else COLORS["edge"]
        out.append(
            f'<line x1="{fmt(x1)}" y1="{fmt(y1)}" x2="{fmt(x2)}" y2="{fmt(y2)}" '
            f'stroke="{color}" stroke-width="{2 if hot or sub else 1}"/>'
            + arrow.replace("{color}", color)
        )
    out.append("</g>")
    for node, kind, label in nodes:
        cx, cy = screen[node]
        text = truncate(label, 18)
        w = label_width(text, font) + 10
        h = font + 7
        classes = ["node", kind]
        stroke, stroke_w, dash = COLORS[f"{kind}_stroke"], 1.0, ""
        if node in matched:
            classes.append("match")
            stroke, stroke_w = COLORS["match"], 2.5
        if node in substituted:
            classes.append("substituted")
            stroke, stroke_w, dash = COLORS["substituted"], 2.5, ' stroke-dasharray="4 2"'
        radius = h / 2 if kind in ("relation", "relmod") else 3
        out.append(
            f'<g class="{" ".join(classes)}" data-node="{esc(node)}">'
            f'<rect x="{fmt(cx - w / 2)}" y="{fmt(cy - h / 2)}" width="{fmt(w)}" '
            f'height="{fmt(h)}" rx="{fmt(radius)}" fill="{COLORS[kind]}" stroke="{stroke}" '
            f'stroke-width="{fmt(stroke_w)}"{dash}/>'
            f'<text x="{fmt(cx)}" y="{fmt(cy + font / 2 - 1)}" text-anchor="middle" '
            f'font-size="{fmt(font)}" fill="#222">{esc(text)}</text></g>'
        )
    out.append("</g>")
    return "".join(out)


def _marked_nodes(nodes: NodeSet) -> set[str]:
    """Graph-panel node ids of a :class:`NodeSet`."""
    out: set[str] = {f"o:{o}" for o in nodes.objects}
    out.update(f"a:{o}:{a}" for o, a in nodes.attributes)
    out.update(f"r:{r}" for r in nodes.relations)
    out.update(f"m:{r}:{m}" for r, m in nodes.relmods)
    return out
