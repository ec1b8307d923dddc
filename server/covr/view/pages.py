"""The browser's HTML pages, rendered on the server (no scripts, no external resources).

Plain server-side rendering keeps the browser work-free and the pages usable offline and when
saved: every page is one HTML document with inline SVG drawings and one local stylesheet. The
same functions write the live pages (``covr view``) and the static copy (``covr view --static``);
a :class:`Links` object decides what the links look like in each.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import urlencode

from covr.view.dataset import Dataset, Filters, Page
from covr.view.svg import esc

if TYPE_CHECKING:
    from covr.questions.example import ExampleRecord
    from covr.scene.model import SceneGraph

# The drawing modules (and the related room behind them) are imported by the pages that draw:
# the list page, the one a browser asks for first, does not pay for them at start-up.

STYLE = """
:root { --fg:#1b1f23; --muted:#5b6570; --line:#d8dee4; --accent:#2b6ca3; }
* { box-sizing: border-box; }
body { font: 14px/1.45 "DejaVu Sans", Verdana, Arial, sans-serif; color: var(--fg); margin: 0; }
header { background: #1f3b57; color: #fff; padding: 8px 16px; display: flex; gap: 18px;
  align-items: baseline; flex-wrap: wrap; }
header a { color: #fff; } header .title { font-weight: bold; font-size: 16px; }
main { padding: 12px 16px; }
a { color: var(--accent); }
form.filters { display: flex; flex-wrap: wrap; gap: 8px 14px; align-items: end; padding: 10px;
  background: #f4f6f8; border: 1px solid var(--line); border-radius: 6px; }
form.filters label { display: flex; flex-direction: column; font-size: 12px; color: var(--muted); }
form.filters select, form.filters input { font: inherit; padding: 3px 4px; min-width: 150px; }
table.examples { border-collapse: collapse; width: 100%; margin-top: 10px; }
table.examples th, table.examples td { border-bottom: 1px solid var(--line); padding: 5px 6px;
  text-align: left; vertical-align: top; }
table.examples th { font-size: 12px; color: var(--muted); }
.pager { margin: 10px 0; display: flex; gap: 14px; align-items: center; }
.muted { color: var(--muted); }
.question { font-size: 20px; font-weight: bold; margin: 6px 0; }
.answer { font-size: 16px; } .answer b { background: #fff3c4; padding: 0 5px; }
.images { display: flex; flex-direction: column; gap: 14px; margin-top: 12px; }
.image-card { border: 3px solid #ccc; border-radius: 6px; padding: 4px; overflow-x: auto; }
.legend span { display: inline-block; margin-right: 12px; }
.swatch { display: inline-block; width: 12px; height: 12px; vertical-align: middle;
  margin-right: 4px; border: 2px solid; }
.error { background: #fff0f0; border: 1px solid #d62728; padding: 10px; border-radius: 6px; }
pre.json { background: #f4f6f8; padding: 8px; overflow-x: auto; font-size: 12px; }
.plots img { max-width: 100%; border: 1px solid var(--line); margin: 6px 0 18px; }
"""


class Links(Protocol):
    """How pages link to each other (live server or static files)."""

    def home(self, filters: Filters | None = None, offset: int = 0) -> str: ...
    def example(self, qid: str, filters: Filters | None = None) -> str: ...
    def image(self, image_id: str) -> str | None: ...
    def plots(self) -> str | None: ...
    def style(self) -> str: ...
    def photo(self, image_id: str) -> str | None: ...


@dataclass(frozen=True)
class ServerLinks:
    """Links of the live browser; ``ds`` selects the dataset when several are open."""

    ds: int = 0
    has_photos: bool = False

    def _q(self, **params: Any) -> str:
        values = {
            "ds": str(self.ds),
            **{k: str(v) for k, v in params.items() if v not in ("", None)},
        }
        return urlencode(values)

    def home(self, filters: Filters | None = None, offset: int = 0) -> str:
        extra = filters.as_query() if filters else {}
        return "/?" + self._q(**extra, offset=offset or "")

    def example(self, qid: str, filters: Filters | None = None) -> str:
        extra = filters.as_query() if filters else {}
        return "/example?" + self._q(qid=qid, **extra)

    def image(self, image_id: str) -> str | None:
        return "/image?" + self._q(id=image_id)

    def plots(self) -> str | None:
        return "/plots?" + self._q()

    def style(self) -> str:
        return "/static/style.css"

    def photo(self, image_id: str) -> str | None:
        return "/photo?" + urlencode({"id": image_id}) if self.has_photos else None


def layout(title: str, body: str, links: Links, *, subtitle: str = "") -> str:
    """A complete page: header with navigation, then ``body``."""
    plots = links.plots()
    nav = f'<a href="{esc(links.home())}">examples</a>'
    if plots:
        nav += f' <a href="{esc(plots)}">plots</a>'
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{esc(title)} · covr view</title>"
        '<link rel="icon" href="data:,">'
        f'<link rel="stylesheet" href="{esc(links.style())}"></head><body>'
        f'<header><span class="title">covr view</span><span>{esc(subtitle)}</span>'
        f"<nav>{nav}</nav></header><main>{body}</main></body></html>\n"
    )


def _select(name: str, label: str, options: Sequence[tuple[str, int]], current: str) -> str:
    items = ['<option value="">any</option>']
    values = [v for v, _ in options]
    if current and current not in values:
        items.append(f'<option value="{esc(current)}" selected>{esc(current)}</option>')
    for value, count in options:
        sel = " selected" if value == current else ""
        items.append(f'<option value="{esc(value)}"{sel}>{esc(value)} ({count})</option>')
    return (
        f'<label>{esc(label)}<select name="{name}" id="f-{name}">{"".join(items)}</select></label>'
    )


def list_page(
    dataset: Dataset,
    page: Page,
    filters: Filters,
    links: Links,
    *,
    ds: int = 0,
    datasets: Sequence[str] = (),
    error: str = "",
) -> str:
    """The examples list: filter form, one row per example, pager."""
    splits = [(name, len(dataset.splits.qids(name))) for name in dataset.splits.names()]
    form = [
        '<form class="filters" method="get" action="/">',
        f'<input type="hidden" name="ds" value="{ds}">',
    ]
    if len(datasets) > 1:
        opts = "".join(
            f'<option value="{i}"{" selected" if i == ds else ""}>{esc(name)}</option>'
            for i, name in enumerate(datasets)
        )
        form[1] = f'<label>file<select name="ds" id="f-ds">{opts}</select></label>'
    form += [
        _select("template", "template", dataset.facets("template"), filters.template),
        _select(
            "paper_template",
            "paper template",
            dataset.facets("paper_template"),
            filters.paper_template,
        ),
        _select("answer", "answer", dataset.facets("answer"), filters.answer),
        _select("property", "property", dataset.facets("property"), filters.property),
    ]
    if splits:
        form.append(_select("split", "split list", splits, filters.split))
    form += [
        f'<label>image id<input name="image" id="f-image" value="{esc(filters.image)}" '
        'placeholder="gqa:2370799"></label>',
        f'<label>question text<input name="text" id="f-text" value="{esc(filters.text)}" '
        'placeholder="words in the question"></label>',
        '<button type="submit" id="apply">filter</button>',
        f'<a href="{esc(links.home())}">clear</a>',
        "</form>",
    ]
    body = ["".join(form)]
    if error:
        body.append(f'<p class="error">{esc(error)}</p>')
    first = page.offset + 1 if page.rows else 0
    last = page.offset + len(page.rows)
    pager = [f'<span id="count">{first:,}–{last:,} of {page.total:,} examples</span>']
    if page.offset > 0:
        pager.append(
            f'<a id="prev" href="{esc(links.home(filters, max(0, page.offset - page.limit)))}">'
            "← previous</a>"
        )
    if last < page.total:
        pager.append(f'<a id="next" href="{esc(links.home(filters, last))}">next →</a>')
    body.append(f'<div class="pager">{"".join(pager)}</div>')
    rows = [
        '<table class="examples"><thead><tr><th>#</th><th>question</th><th>answer</th>'
        "<th>template</th><th>paper template</th><th>images</th></tr></thead><tbody>"
    ]
    for r in page.rows:
        rows.append(
            f'<tr class="example-row" data-qid="{esc(r.qid)}"><td class="muted">{r.row + 1}</td>'
            f'<td><a class="open" href="{esc(links.example(r.qid, filters))}">'
            f"{esc(r.utterance)}</a></td><td>{esc(r.answer)}</td><td>{esc(r.template)}</td>"
            f"<td>{esc(r.paper_template)}</td><td>{r.images}</td></tr>"
        )
    rows.append("</tbody></table>")
    body.append("".join(rows))
    if not page.rows:
        body.append('<p class="muted" id="empty">No example matches these filters.</p>')
    return layout("examples", "".join(body), links, subtitle=str(dataset.path))


def legend() -> str:
    from covr.view.example_svg import role_color

    return (
        '<p class="legend">'
        '<span><i class="swatch" style="border-color:#d62728"></i>queried subgraph</span>'
        '<span><i class="swatch" style="border-color:#9400d3;border-style:dashed"></i>'
        "substituted node (distractor)</span>"
        f'<span><i class="swatch" style="border-color:{role_color("source")}"></i>source</span>'
        f'<span><i class="swatch" style="border-color:{role_color("positive")}"></i>positive</span>'
        f'<span><i class="swatch" style="border-color:{role_color("distractor")}"></i>'
        "distractor</span></p>"
    )


def example_body(
    example: ExampleRecord,
    scenes: Mapping[str, SceneGraph | None],
    links: Links,
) -> str:
    """Question, answer, program tree and every image drawn with its role and marks."""
    from covr.view.example_svg import answer_text, image_panel_svg, program_svg, role_color
    from covr.view.roles import image_roles

    roles = image_roles(example, scenes)
    subgraphs = example.get("subgraphs") or {}
    meta = [
        ("qid", example.get("qid")),
        ("template", example.get("template")),
        ("paper template", example.get("paper_template")),
        ("properties", ", ".join(example.get("properties") or []) or "—"),
        ("split", example.get("split")),
        ("subgraphs", "; ".join(f"{k} = {v}" for k, v in subgraphs.items()) or "—"),
    ]
    parts = [
        f'<div class="question" id="question">{esc(example.get("utterance", ""))}</div>',
        f'<div class="answer">answer: <b id="answer">{esc(answer_text(example.get("answer")))}'
        "</b></div>",
        '<p class="muted">'
        + " · ".join(f"{esc(k)}: {esc(v)}" for k, v in meta if v not in (None, ""))
        + "</p>",
        "<h3>program</h3>",
        program_svg(example.get("program") or []),
        "<h3>images</h3>",
        legend(),
        '<div class="images">',
    ]
    for role in roles:
        scene = scenes.get(role.image_id)
        link = links.image(role.image_id)
        title = f'<a href="{esc(link)}">{esc(role.image_id)}</a>' if link else esc(role.image_id)
        extra = f" · g′ = {esc(role.concrete)}" if role.concrete else ""
        parts.append(
            f'<div class="image-card" style="border-color:{role_color(role.role)}" '
            f'data-image-id="{esc(role.image_id)}" data-role="{esc(role.role)}">'
            f"<div>{title} — <b>{esc(role.label)}</b>{extra}</div>"
            f"{image_panel_svg(role, scene, links.photo(role.image_id), titled=False)}</div>"
        )
    parts.append("</div>")
    return "".join(parts)


def example_page(
    example: ExampleRecord,
    scenes: Mapping[str, SceneGraph | None],
    links: Links,
    *,
    filters: Filters | None = None,
    neighbours: tuple[str | None, str | None] = (None, None),
    subtitle: str = "",
) -> str:
    nav = [f'<a href="{esc(links.home(filters))}">← list</a>']
    before, after = neighbours
    if before:
        nav.append(
            f'<a id="prev-example" href="{esc(links.example(before, filters))}">previous</a>'
        )
    if after:
        nav.append(f'<a id="next-example" href="{esc(links.example(after, filters))}">next</a>')
    import json

    raw = json.dumps(example, indent=1, ensure_ascii=False)
    body = (
        f'<div class="pager">{" ".join(nav)}</div>'
        + example_body(example, scenes, links)
        + f'<details><summary>JSON</summary><pre class="json">{esc(raw)}</pre></details>'
    )
    return layout(str(example.get("utterance", "example")), body, links, subtitle=subtitle)


def image_page(scene: SceneGraph, svg: str, links: Links) -> str:
    counts = ", ".join(f"{v} {k}" for k, v in scene.counts().items())
    body = f"<h2>{esc(scene.image_id)}</h2><p class='muted'>{esc(counts)}</p>{svg}"
    return layout(scene.image_id, body, links)


def error_page(message: str, links: Links, status: int = 404) -> str:
    return layout(
        "error",
        f'<p class="error" id="error" data-status="{status}">{esc(message)}</p>',
        links,
    )


def plots_page(sections: Sequence[tuple[str, Sequence[tuple[str, str]]]], links: Links) -> str:
    """``sections``: (heading, [(caption, image URL)])."""
    body = ['<div class="plots">']
    if not any(items for _, items in sections):
        body.append('<p class="muted">No plots.</p>')
    for heading, items in sections:
        body.append(f"<h2>{esc(heading)}</h2>")
        if not items:
            body.append('<p class="muted">none</p>')
        for caption, url in items:
            body.append(
                f"<figure><figcaption>{esc(caption)}</figcaption>"
                f'<img src="{esc(url)}" alt="{esc(caption)}"></figure>'
            )
    body.append("</div>")
    return layout("plots", "".join(body), links)
