"""Picking the images of a question: the main sets and the flip modes of a second set.

A template's ``images`` rule gives the main set (source image, positives, distractors); its
``flip`` names how a second set with another answer is looked for. Each mode of the template
vocabulary is one entry of :data:`FLIP_MODES` that adjusts a :class:`Pick` before the shared
drawing code runs, so adding a mode is adding an entry (``main`` is the rule itself).
"""

from __future__ import annotations

import random
from collections.abc import Callable
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
    pick.anchor_pool = sorted(
        i for i in rel.sigs if i not in rel.positive_set and not ctx.allowed(template, rel, i, edge)
    )


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
    if pick.positives_ok and rel.positives:
        k = rng.randint(min(pick.low, len(rel.positives)), min(pick.high, len(rel.positives)))
        for p in rng.sample(rel.positives, k):
            if len(chosen) < MAX_IMAGES and p not in chosen:
                chosen.append(p)
    d_low, d_high = rule.distractors
    if mode != "main" and chosen:
        # a second image set needs only the form's declared minimum (issue 16 item 1)
        d_low = rule.min_distractors
    room = MAX_IMAGES - len(chosen)
    n = min(rng.randint(d_low, d_high), room)
    if n > 0:
        prefer = mode == "main" or rng.random() < 0.5
        exclude = set(chosen)
        chosen += pick_distractors(instance, rel, rng, n, exclude, allowed, prefer=prefer)
    if not chosen or len(chosen) > MAX_IMAGES or shortfall(instance.template, rel, chosen):
        return None
    rng.shuffle(chosen)
    return chosen


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
