"""Picking the images of a question: the main sets and the flip modes of a second set.

A template's ``images`` rule gives the main set (source image, positives, distractors); its
``flip`` names how a second set with another answer is looked for. Each mode of the template
vocabulary is one entry of :data:`FLIP_MODES` that adjusts a :class:`Pick` before the shared
drawing code runs, so adding a mode is adding an entry (``main`` is the rule itself).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from covr.questions.signature_rules import rule_holds, signature_order
from covr.questions.slots import Allowed, Instance, Related
from covr.questions.templates import MAX_IMAGES, Template


@dataclass
class Pick:
    """What one image set is drawn from (the template's rule, adjusted by the mode)."""

    use_source: bool
    low: int
    high: int
    positives_ok: bool = True
    anchor_pool: list[str] = field(default_factory=list)
    keep_required: bool = True


@dataclass(frozen=True)
class PickContext:
    instance: Instance
    rel: Related
    rng: random.Random
    allowed: Allowed


def _main(pick: Pick, ctx: PickContext) -> None:
    return None


def _positives(pick: Pick, ctx: PickContext) -> None:
    pick.use_source = ctx.rng.random() < 0.5
    pick.low, pick.high = 0, min(MAX_IMAGES - 1, max(pick.high, 1) + 1)


def _anchor(pick: Pick, ctx: PickContext) -> None:
    """Only images the template avoids (a distractor that breaks one of its rules) as anchor."""
    template, rel, edge = ctx.instance.template, ctx.rel, ctx.instance.edge
    pick.use_source = False
    pick.positives_ok = False
    pool = sorted(
        i for i in rel.sigs if i not in rel.positive_set and not ctx.allowed(template, rel, i, edge)
    )
    # the decoy's own image when there is one: there the referent has the decoy (choose forms)
    anchor = ctx.instance.anchor
    pick.anchor_pool = [anchor] if anchor in pool else pool


def _drop_source(pick: Pick, ctx: PickContext) -> None:
    pick.use_source = False
    pick.positives_ok = False
    pick.keep_required = ctx.rng.random() < 0.5


FLIP_MODES: dict[str, Callable[[Pick, PickContext], None]] = {
    "main": _main,
    "positives": _positives,
    "anchor": _anchor,
    "second": _anchor,
    "drop_source": _drop_source,
}
"""One entry per ``images.flip`` mode of the template vocabulary (plus ``main``)."""


def pick_images(
    instance: Instance, rel: Related, rng: random.Random, mode: str, allowed: Allowed
) -> list[str] | None:
    """One image set for ``instance`` in ``mode`` (None: no valid set)."""
    rule = instance.template.images
    pick = Pick(rule.source, *rule.positives)
    FLIP_MODES[mode](pick, PickContext(instance, rel, rng, allowed))
    chosen: list[str] = []
    if pick.use_source:
        chosen.append(rel.source)
    if pick.keep_required:
        for r in instance.required:
            if r not in chosen:
                chosen.append(r)
    if pick.anchor_pool:
        a = rng.choice(pick.anchor_pool)
        if a not in chosen:
            chosen.append(a)
    target = shown_target(rule.shown, rng)
    d_low, d_high = rule.distractors
    if mode != "main" and chosen:
        # a second image set needs only the form's declared minimum (issue 16 item 1)
        d_low = rule.min_distractors
    positives = _draw_positives(pick, rel, rng, len(chosen), target - d_low)
    chosen += [p for p in positives if p not in chosen][: MAX_IMAGES - len(chosen)]
    n = min(max(d_low, min(target - len(chosen), d_high)), MAX_IMAGES - len(chosen))
    if n > 0:
        prefer = mode == "main" or rng.random() < 0.5
        exclude = set(chosen)
        chosen += pick_distractors(instance, rel, rng, n, exclude, allowed, prefer=prefer)
    if pick.positives_ok and len(chosen) < target:
        # too few distractors to reach the target: more positives, as many as the form allows
        spare = [p for p in rel.positives if p not in chosen]
        extra = max(0, min(target - len(chosen), pick.high - len(positives), len(spare)))
        chosen += rng.sample(spare, extra)
    if not chosen or len(chosen) > MAX_IMAGES or shortfall(instance.template, rel, chosen):
        return None
    rng.shuffle(chosen)
    return chosen


SHOWN_WEIGHTS: tuple[tuple[int, int], ...] = ((5, 12), (4, 5), (3, 2), (2, 1))
"""How many images an image set aims at, as (count, weight): a mean of 4.4 when every count is
allowed and the data has the images, the COVR paper's average (arXiv version, Table 3: 4.4
images per question). Drawn per set, so the count does not give the answer away; a form's
``shown`` range keeps the counts it allows, and a set that cannot reach its target (too few
related images) shows fewer, never fewer than ``shown[0]`` (issue 16 item 1)."""


def shown_target(shown: tuple[int, int], rng: random.Random) -> int:
    """The number of images one image set aims at (a seeded draw from :data:`SHOWN_WEIGHTS`
    restricted to the form's ``shown`` range)."""
    low, high = shown
    options = [(n, w) for n, w in SHOWN_WEIGHTS if low <= n <= high] or [(high, 1)]
    return rng.choices([n for n, _ in options], weights=[w for _, w in options])[0]


def _draw_positives(
    pick: Pick, rel: Related, rng: random.Random, taken: int, room: int
) -> list[str]:
    """A seeded sample of positives: at least ``pick.low`` (when there are that many), at most
    ``pick.high`` and, above the minimum, no more than leave ``room`` minus ``taken`` free."""
    if not (pick.positives_ok and rel.positives):
        return []
    count = len(rel.positives)
    low = min(pick.low, count)
    high = max(low, min(pick.high, count, room - taken))
    return rng.sample(rel.positives, rng.randint(low, high))


def shortfall(template: Template, rel: Related, images: list[str]) -> str | None:
    """Why an image set breaks the form's declared image rule, or None.

    Why: an example without a distractor (17 % of them on real GQA images, issue 16) can be
    answered without composing anything; the form's ``min_distractors`` and ``shown`` range are
    its contract, and a set that cannot meet them is dropped (counted by this reason)."""
    rule = template.images
    distractors = sum(1 for i in images if i not in rel.positive_set)
    if distractors < rule.min_distractors:
        return "too-few-distractors"
    if not rule.shown[0] <= len(images) <= rule.shown[1]:
        return "image-count"
    return None


SWAPS = 8
"""One-image swaps of a first example's images tried for a second answer (see :func:`swaps`)."""


def swaps(
    instance: Instance, rel: Related, images: list[str], rng: random.Random, allowed: Allowed
) -> Iterator[list[str]]:
    """At most :data:`SWAPS` image sets that replace one image of ``images`` by another image the
    form may show (a positive where the form shows positives, or an allowed distractor), in a
    seeded order, each meeting the form's image rule; required images stay.

    Why: the flip sets are drawn afresh and, with a target of ~4.4 images (:data:`SHOWN_WEIGHTS`),
    mostly show the same few related images as the first set and so give the same answer ("All
    men are wearing shorts" stays false while the man in jeans is shown). Changing one image is
    the smallest change that can change the answer, and keeps the number of images; measured on
    the bundled GQA sample, it is what gives most forms a text with two answers (paper §3: 75 %)."""
    template = instance.template
    pool = [rel.source, *rel.positives] if template.images.positives[1] > 0 else [rel.source]
    pool += [
        r.image_id for r in rel.distractors if allowed(template, rel, r.image_id, instance.edge)
    ]
    spare = [i for i in dict.fromkeys(pool) if i not in images]
    fixed = set(instance.required)
    pairs = [(k, r) for k, i in enumerate(images) if i not in fixed for r in spare]
    rng.shuffle(pairs)
    made = 0
    for k, r in pairs:
        candidate = [*images[:k], r, *images[k + 1 :]]
        if shortfall(template, rel, candidate) is None:
            yield candidate
            made += 1
            if made >= SWAPS:
                return


def pick_distractors(
    instance: Instance,
    rel: Related,
    rng: random.Random,
    n: int,
    exclude: set[str],
    allowed: Allowed,
    *,
    prefer: bool = True,
) -> list[str]:
    """``n`` distractors, round robin over signatures in a seeded order (the template's
    preferred signatures first when ``prefer``)."""
    template: Template = instance.template
    edge = instance.edge
    by_sig: dict[str, list[str]] = {}
    for r in rel.distractors:
        if r.image_id in exclude or not allowed(template, rel, r.image_id, edge):
            continue
        by_sig.setdefault(r.signature, []).append(r.image_id)
    sigs = sorted(by_sig, key=signature_order)
    rng.shuffle(sigs)
    rules = template.prefer if prefer else ()
    preferred = [s for s in sigs if any(rule_holds(p, s, rel.g, edge) for p in rules)]
    order = preferred + [s for s in sigs if s not in preferred]
    queues = {s: rng.sample(by_sig[s], len(by_sig[s])) for s in order}
    picked: list[str] = []
    while len(picked) < n and any(queues.values()):
        for s in order:
            while queues[s] and queues[s][0] in picked:
                queues[s].pop(0)
            if queues[s] and len(picked) < n:
                picked.append(queues[s].pop(0))
    return picked
