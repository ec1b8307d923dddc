"""De-duplication and balancing of generated examples (paper App. C, DESIGN §7).

Balancing, per template ``t`` with target size ``S``:

1. first the questions whose text appears with at least two different answers (all examples of
   one text are taken together, texts in a seeded order) — the paper notes these were always
   fewer than ``S``; if they are not, they are cut at ``S``;
2. then, until ``|L_t| = S``: pick the answer seen least in ``L_t`` among the answers still
   available, and among the remaining examples with that answer the one whose subgraph structure
   ``(size, depth)`` was seen least. Ties are broken by a seeded order, so the result depends only
   on the input and the seed.

``S`` is ``per_template`` when given (a template with fewer examples keeps all of them), else the
size of the smallest template group, which makes template counts equal, but at least 2: with
``S = 1`` no text could keep two answers and step 1 would be empty for every template (seen on
the bundled GQA sample through the store lookup, where one form had a single example: 0 % of
the balanced texts had two answers). A text with two answers that does not fit whole keeps
one example per answer (its two answers) when that fits, instead of being cut to one example.

**The answer given the number of images.** Every answer above is counted *with the number of
images shown*: the loop of step 2 evens out (images shown, answer) pairs, and when the texts of
step 1 are more than ``S`` they are taken by the same measure (the text whose answers at its
image count were kept least, then the seeded order) instead of the seeded order alone. Why: a
count of images is at most the number shown minus one (every example shows a distractor), so
with the answer balanced over the template only, the number of images predicted a count's
answer (on the real GQA sample the image-identity baseline, which reads only which and how
many images are shown, beat MAJTEMPL by 3.4 points on a program split's test set, all of it in
the Count forms: with 3 images the answers were 1, 0, 2; with 5 they were 3, 4, 2). Evened out
per number of images, each number's most frequent answer is the template's, and the number
says nothing more than the template (docs/questions.md, "Balancing").

**Image spread** (issue 36 item 1): with ``max_image_share`` no image may be shown in more than
that share of the balanced examples (``covr balance`` warns when the most-shown image is over
5 % and leaves the cap to the user: on 100 real GQA images a few images with many objects are
the only distractors of most single-noun subgraphs, and a 5 % cap kept 20 of 547 examples). The cap is that share of the planned output (the sum of every
group's target); an example (or a text's examples, taken whole) that would show an image past
it is passed over, in the same seeded order. Why here and not (only) at generation: what an
image may be shown in is a property of the whole dataset, and this is the one step that sees the
whole dataset at once, so the choice is deterministic whatever workers or Ray shards made the
input. Generation spreads images per source image already (``ImageGenerator._least_shown``).
"""

from __future__ import annotations

import heapq
import json
import math
import random
from collections import Counter, defaultdict, deque
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from covr.questions.errors import QuestionError
from covr.questions.example import ExampleRecord

IMAGE_SHARE_GOAL = 0.05
"""No image should be in more than 5 % of a release's examples (issue 36); ``covr balance``
warns above it and ``--max-image-share`` enforces a share."""
MIN_IMAGE_CAP = 2
"""The cap never goes below this: a tiny release (the bundled samples) keeps its pairs."""


def dedupe(examples: Iterable[ExampleRecord]) -> list[ExampleRecord]:
    """Keep the first example of each (text, answer, image set)."""
    seen: set[tuple[str, str, tuple[str, ...]]] = set()
    out = []
    for ex in examples:
        key = (ex["utterance"], _answer_key(ex["answer"]), tuple(sorted(ex["scenes"])))
        if key not in seen:
            seen.add(key)
            out.append(ex)
    return out


def _answer_key(answer: Any) -> str:
    return json.dumps(answer)


def _shown_answer(ex: Mapping[str, Any]) -> tuple[int, str]:
    """What balancing evens out: (number of distinct images shown, answer)."""
    return len(set(ex["scenes"])), _answer_key(ex["answer"])


def _structure(ex: ExampleRecord) -> tuple[int, ...]:
    raw = ex.get("structure") or [0, 0]
    return tuple(int(x) for x in raw)


class ImageCap:
    """How often each image has been kept, against one cap (``None``: no cap)."""

    def __init__(self, cap: int | None) -> None:
        self.cap = cap
        self.shown: Counter[str] = Counter()

    def fits(self, examples: Sequence[Mapping[str, Any]]) -> bool:
        if self.cap is None:
            return True
        adding = Counter(i for ex in examples for i in set(ex["scenes"]))
        return all(self.shown[i] + k <= self.cap for i, k in adding.items())

    def keep(self, examples: Sequence[Mapping[str, Any]]) -> None:
        self.shown.update(i for ex in examples for i in set(ex["scenes"]))


def _take_balanced(
    pool: list[ExampleRecord],
    room: int,
    chosen: list[ExampleRecord],
    rng: random.Random,
    images: ImageCap,
) -> None:
    """The answer/structure loop of App. C over ``pool`` (in place into ``chosen``)."""
    answers = Counter(_shown_answer(e) for e in chosen)
    structures = Counter(_structure(e) for e in chosen)
    buckets: dict[tuple[int, str], dict[tuple[int, ...], list[ExampleRecord]]] = defaultdict(
        lambda: defaultdict(list)
    )
    for ex in pool:
        buckets[_shown_answer(ex)][_structure(ex)].append(ex)
    for by_structure in buckets.values():
        for items in by_structure.values():
            rng.shuffle(items)
    taken = 0
    while taken < room and buckets:
        least = min(answers[a] for a in buckets)
        options = sorted(a for a in buckets if answers[a] == least)
        answer = options[rng.randrange(len(options))] if len(options) > 1 else options[0]
        by_structure = buckets[answer]
        fewest = min(structures[s] for s in by_structure)
        shapes = sorted(s for s in by_structure if structures[s] == fewest)
        shape = shapes[rng.randrange(len(shapes))] if len(shapes) > 1 else shapes[0]
        ex = by_structure[shape].pop()
        if not by_structure[shape]:
            del by_structure[shape]
        if not by_structure:
            del buckets[answer]
        if not images.fits([ex]):
            continue
        images.keep([ex])
        chosen.append(ex)
        answers[answer] += 1
        structures[shape] += 1
        taken += 1


def _one_per_answer(items: list[ExampleRecord], room: int) -> list[ExampleRecord]:
    """The first example of each answer of one text, if at least two answers fit in ``room``
    (else none): the text keeps two answers instead of one."""
    firsts: dict[str, ExampleRecord] = {}
    for ex in items:
        firsts.setdefault(_answer_key(ex["answer"]), ex)
    picked = list(firsts.values())[:room]
    return picked if len(picked) >= 2 else []


def balance(
    examples: Sequence[ExampleRecord],
    *,
    per_template: int | None = None,
    seed: int = 0,
    key: str = "template",
    max_image_share: float | None = None,
) -> list[ExampleRecord]:
    """Balanced examples, grouped by ``key`` (``template`` or ``paper_template``) in first-seen
    order; see the module docstring. ``max_image_share`` ``None``: no image cap."""
    if per_template is not None and per_template < 1:
        raise QuestionError("per_template must be >= 1")
    if max_image_share is not None and not 0 < max_image_share <= 1:
        raise QuestionError(f"max_image_share must be in (0, 1], got {max_image_share}")
    groups: dict[str, list[ExampleRecord]] = {}
    for ex in dedupe(examples):
        fields: Mapping[str, Any] = ex  # ``key`` is the caller's field name
        if key not in fields:
            raise QuestionError(f"example {ex.get('qid', '?')} has no field {key!r}")
        groups.setdefault(str(fields[key]), []).append(ex)
    if not groups:
        return []
    target = (
        per_template if per_template is not None else max(2, min(len(g) for g in groups.values()))
    )
    planned = sum(min(target, len(g)) for g in groups.values())
    if max_image_share is None:
        return _balanced(groups, target, seed, ImageCap(None))

    # The cap is a share of the output, and a lower cap keeps fewer examples: the largest cap
    # whose output holds it is found by bisection (the output grows with the cap).
    def within(cap: int) -> list[ExampleRecord] | None:
        kept = _balanced(groups, target, seed, ImageCap(cap))
        return kept if cap <= max(MIN_IMAGE_CAP, max_image_share * len(kept)) else None

    low, high = MIN_IMAGE_CAP, max(MIN_IMAGE_CAP, math.floor(max_image_share * planned))
    best = within(low)
    if best is None:  # even the smallest cap is over the share of what it keeps: keep that
        return _balanced(groups, target, seed, ImageCap(low))
    while low < high:
        middle = (low + high + 1) // 2
        found = within(middle)
        if found is None:
            high = middle - 1
        else:
            low, best = middle, found
    return best


def _balanced(
    groups: Mapping[str, list[ExampleRecord]], target: int, seed: int, images: ImageCap
) -> list[ExampleRecord]:
    """One pass of the per-group selection (the module text) under one image cap."""
    out: list[ExampleRecord] = []
    for name, group in groups.items():
        rng = random.Random(f"{seed}:{name}")
        answers_of: dict[str, set[str]] = defaultdict(set)
        for ex in group:
            answers_of[ex["utterance"]].add(_answer_key(ex["answer"]))
        multi = [e for e in group if len(answers_of[e["utterance"]]) >= 2]
        rest = [e for e in group if len(answers_of[e["utterance"]]) < 2]
        chosen: list[ExampleRecord] = []
        by_text: dict[str, list[ExampleRecord]] = defaultdict(list)
        for ex in multi:
            by_text[ex["utterance"]].append(ex)
        texts = sorted(by_text)
        rng.shuffle(texts)
        left: list[ExampleRecord] = []
        kept: Counter[tuple[int, str]] = Counter()
        for text in _evened_texts(texts, by_text, kept):
            items = by_text[text]
            if len(chosen) >= target:
                left.extend(items)
                continue
            if len(chosen) + len(items) > target:
                pair = _one_per_answer(items, target - len(chosen))
                if pair and not images.fits(pair):
                    pair = []
                images.keep(pair)
                chosen.extend(pair)
                kept.update(_shown_answer(e) for e in pair)
                left.extend(e for e in items if not any(e is p for p in pair))
                continue
            if not images.fits(items):
                continue  # a text is kept whole or not at all (its answers stay together)
            images.keep(items)
            chosen.extend(items)
            kept.update(_shown_answer(e) for e in items)
        _take_balanced(rest + left, target - len(chosen), chosen, rng, images)
        out.extend(chosen)
    return out


def _evened_texts(
    texts: Sequence[str], by_text: Mapping[str, Sequence[ExampleRecord]], kept: Counter[Any]
) -> Iterator[str]:
    """Step 1's texts in the order that evens out (images shown, answer): each time the text
    whose (images shown, answer) pairs the caller has kept least so far (``kept``, which the
    caller updates before asking for the next text; summed over the text's pairs), ties in the
    seeded order of ``texts``.

    Texts with the same pairs wait in one queue, and the queues in a heap whose scores are
    brought up to date when they come out: a score only grows (the caller only adds), so a
    queue that comes out with its score still current is the least one. A choice costs a few
    heap steps, not a look at every queue: a form of a 1x store has thousands of pair sets
    (one per answer pair and number of images)."""
    queues: dict[tuple[tuple[int, str], ...], deque[str]] = {}
    for text in texts:
        pairs = tuple(sorted({_shown_answer(e) for e in by_text[text]}))
        queues.setdefault(pairs, deque()).append(text)
    position = {text: i for i, text in enumerate(texts)}
    heap = [(0, position[queue[0]], pairs) for pairs, queue in queues.items()]
    heapq.heapify(heap)
    while heap:
        score, first, pairs = heapq.heappop(heap)
        now = sum(kept[k] for k in pairs)
        if now != score:
            heapq.heappush(heap, (now, first, pairs))
            continue
        queue = queues[pairs]
        yield queue.popleft()
        if queue:
            heapq.heappush(heap, (sum(kept[k] for k in pairs), position[queue[0]], pairs))
