"""Per-form quotas and the run's image spread: which generated examples a run keeps (issue 36
items 1 and 2).

**Quotas.** ``covr balance`` cuts every form to the size of the rarest (paper App. C), so an
unbounded run over 100 real GQA images made 12,929 examples of which balancing kept 361 (2.8 %):
counting forms were filled hundreds of times over while ``choose_object`` had 20. With
``--per-template N`` the driver keeps at most about ``N`` examples of each form and stops asking
the engine for a form once it has them, so the rest of the run goes to the forms that are still
short, and a run ends when every form is full.

**Image spread.** With ``image_share`` no image is shown in more than that share of the run's
examples (at least :data:`~covr.questions.balance.MIN_IMAGE_CAP`, so that a text's two examples
may share an image). Why: the engine spreads each source image's examples over the candidates
its lookups offer, but on 100 real GQA images a few images with many objects are distractors for
most subgraphs, and a run showed its most-shown image in 8 to 10 % of the examples (a model
could learn answers from image ids). The share is a property of the whole run, so it is applied
at its end (:meth:`FormQuota.select`): the texts of the rarest forms are taken first, then the
others, each while none of its images is at a cap, and the largest cap whose selection holds
the share is found by bisection, as ``covr balance`` does. On the real sample the order matters:
in merge order the counting forms took every image's room and 8 of 19 forms kept nothing. With
a quota, the run draws :data:`POOL` times ``N`` texts per form to select from (each form's
texts among fewer images would leave no room for the share).

Why the output does not depend on workers, shards or timing: the quota is applied where the
examples are merged, in source-image order, one text at a time (:meth:`FormQuota.admit`), and
the selection is a function of what was admitted, so which examples are kept is decided by that
order alone. What the engine is told (:attr:`FormQuota.full`) only lets it skip work: a form full
after the images merged so far is full for every later image too (counts only grow), and each
form draws from a random stream of its own (``ImageGenerator._form_rng``), so skipping it changes
no other form's examples. The examples of one text (its two answers) are kept or dropped
together; a pair may take a form one past ``N``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from covr.questions.balance import MIN_IMAGE_CAP, ImageCap

if TYPE_CHECKING:
    from covr.questions.options import GenerationOptions

E = TypeVar("E", bound=Mapping[str, Any])

POOL = 2
"""With a quota and an image share, a run admits this many times ``N`` texts per form, and the
selection keeps ``N`` of them (measured on 100 real GQA images, ``--per-template 40``: from the
quota's own 498 examples no cap got the most-shown image under 7 %, from twice as many a
selection of 454 held 4.8 %; in a run, where the forms fill from the first source images, twice
``N`` got it to 6 % and four times to 5.3 % at 152 examples, for 40 % more CPU)."""

MIN_KEPT = 0.5
"""With a quota, the selection keeps at least this share of what the quota alone would keep:
where the images at hand cannot hold the image share for more (``--per-template 40`` on 100 real
GQA images: 82 examples at most), the smallest cap that keeps this much is used and the report
says the share was not reached. Without a quota the share is held, whatever it costs (the same
images: 1,386 of 6,007 examples kept)."""


def by_text(examples: Iterable[E]) -> Iterator[list[E]]:
    """``examples`` in runs of one text: consecutive examples of one form, source image and
    utterance (the engine emits a text's two answers one after the other)."""
    group: list[E] = []
    key: tuple[str, str, str] | None = None
    for example in examples:
        this = (
            str(example.get("template", "")),
            str(example.get("source_image", "")),
            str(example.get("utterance", "")),
        )
        if group and this != key:
            yield group
            group = []
        key = this
        group.append(example)
    if group:
        yield group


def _form(text: Sequence[Mapping[str, Any]]) -> str:
    return str(text[0].get("template", ""))


@dataclass
class FormQuota:
    """Which examples a run keeps, in merge order; ``limit`` ``None`` keeps every example of a
    form, ``image_share`` ``None`` puts no cap on how often an image is shown."""

    limit: int | None = None
    image_share: float | None = None
    made: Counter[str] = field(default_factory=Counter)
    over: Counter[str] = field(default_factory=Counter)
    """Examples not kept because their form was full, per form."""
    capped: Counter[str] = field(default_factory=Counter)
    """Examples admitted but not selected under the image share, per form."""
    full: set[str] = field(default_factory=set)
    share_held: bool = True
    """Whether the selection holds ``image_share`` (see :data:`MIN_KEPT`)."""
    share_applies: bool = True
    """Whether the run's images could hold ``image_share`` at all (see :meth:`select`)."""

    @classmethod
    def for_run(cls, options: GenerationOptions) -> FormQuota:
        """The quota of a run of ``options`` (``per_template`` and ``max_image_share``)."""
        return cls(options.per_template, options.max_image_share)

    def __post_init__(self) -> None:
        if self.image_share is not None and not 0 < self.image_share <= 1:
            raise ValueError(f"image_share must be in (0, 1], got {self.image_share}")

    @property
    def admitting(self) -> int | None:
        """How many examples of a form the run admits: ``limit``, or :data:`POOL` times it
        when the image share selects among them at the end."""
        if self.limit is None or self.image_share is None:
            return self.limit
        return POOL * self.limit

    def admit(self, text: Sequence[Mapping[str, Any]]) -> bool:
        """Whether the examples of one text are admitted (counted when they are)."""
        if not text:
            return False
        form, admitting = _form(text), self.admitting
        if admitting is not None and self.made[form] >= admitting:
            self.over[form] += len(text)
            return False
        self.made[form] += len(text)
        if admitting is not None and self.made[form] >= admitting:
            self.full.add(form)
        return True

    def select(self, texts: list[list[E]]) -> list[list[E]]:
        """What the run keeps of the ``texts`` it admitted (in their order): all of them
        without an image share; else at most ``limit`` examples per form with no image in more
        than ``image_share`` of the selection (see the module docstring). Counts are updated."""
        if self.image_share is None:
            return texts
        share = self.image_share
        made = Counter(self.made)
        order = sorted(range(len(texts)), key=lambda k: (made[_form(texts[k])], k))
        slots = _shown(texts)
        size = sum(len(t) for t in texts)
        sources = len({str(t[0].get("source_image", "")) for t in texts})
        if not texts or max(sum(slots.values()) / size / len(slots), 1 / sources) > share:
            # an even spread would show every image in more than the share (the 8 bundled
            # images: each in half the examples), or the run has too few source images (each
            # is in all of its own examples): the share cannot apply, the quota does
            self.share_held = self.share_applies = False
            return self._keep(texts, self._in_order(texts))

        def within(cap: int) -> list[int]:
            images, forms, kept = ImageCap(cap), Counter[str](), []
            for k in order:
                text, form = texts[k], _form(texts[k])
                if self.limit is not None and forms[form] >= self.limit:
                    continue
                if images.fits(text):
                    images.keep(text)
                    forms[form] += len(text)
                    kept.append(k)
            return kept

        def holds(kept: list[int]) -> bool:
            size = sum(len(texts[k]) for k in kept)
            shown = _shown(texts[k] for k in kept)
            return max(shown.values(), default=0) <= max(MIN_IMAGE_CAP, share * size)

        low = MIN_IMAGE_CAP
        high = max([low, *slots.values()])
        enough = MIN_KEPT * sum(len(texts[k]) for k in self._in_order(texts))
        best, top = within(low), high
        while low < high:  # the largest cap whose selection holds the share
            middle = (low + high + 1) // 2
            found = within(middle)
            if holds(found):
                low, best = middle, found
            else:
                high = middle - 1
        if self.limit is not None and sum(len(texts[k]) for k in best) < enough:
            low = MIN_IMAGE_CAP  # the smallest cap that keeps enough (selections grow with it)
            while low < top:
                middle = (low + top) // 2
                if sum(len(texts[k]) for k in within(middle)) >= enough:
                    top = middle
                else:
                    low = middle + 1
            best = within(top)
            self.share_held = holds(best)
        return self._keep(texts, best)

    def _in_order(self, texts: list[list[E]]) -> list[int]:
        """The texts the quota alone keeps (``limit`` per form, in merge order)."""
        forms: Counter[str] = Counter()
        kept = []
        for k, text in enumerate(texts):
            if self.limit is None or forms[_form(text)] < self.limit:
                forms[_form(text)] += len(text)
                kept.append(k)
        return kept

    def _keep(self, texts: list[list[E]], kept: list[int]) -> list[list[E]]:
        """``texts[k]`` for the ``kept`` indices in merge order; the others are counted as
        not kept under the image share."""
        chosen = set(kept)
        for k, text in enumerate(texts):
            if k not in chosen:
                self.made[_form(text)] -= len(text)
                self.capped[_form(text)] += len(text)
        return [texts[k] for k in sorted(chosen)]

    def spread(self, shown: Mapping[str, int], examples: int) -> dict[str, Any]:
        """The run's most-shown image against the image share (``OUT.dropped.json``'s
        ``image_spread``); ``shown``: how many of the ``examples`` kept show each image."""
        top = max(shown.items(), key=lambda kv: (kv[1], kv[0]), default=("", 0))
        return {
            "max_image_share": self.image_share,
            "held": self.image_share is None or self.share_held,
            "applies": self.image_share is not None and self.share_applies,
            "most_shown": {"image": top[0], "examples": top[1], "share": top[1] / max(1, examples)},
        }

    def done(self, forms: Iterable[str]) -> bool:
        """Whether every one of ``forms`` is full (the run can stop)."""
        return self.limit is not None and all(f in self.full for f in forms)

    def report(self, forms: Iterable[str], dropped: Mapping[str, int]) -> dict[str, Any]:
        """Per form: examples wanted, made, not kept over the quota or under the image share,
        and why candidates were dropped (the ``form/reason`` keys of the run's drop counter)."""
        out: dict[str, Any] = {}
        for form in forms:
            reasons = {
                key.split("/", 1)[1]: n
                for key, n in sorted(dropped.items())
                if key.startswith(form + "/")
            }
            out[form] = {
                "wanted": self.limit,
                "made": self.made[form],
                "over_quota": self.over[form],
                "image_share": self.capped[form],
                "dropped": reasons,
            }
        return out


def _images(text: Sequence[Mapping[str, Any]]) -> Counter[str]:
    """How many of a text's examples show each image."""
    return Counter(i for example in text for i in set(example["scenes"]))


def _shown(texts: Iterable[Sequence[Mapping[str, Any]]]) -> Counter[str]:
    """How many examples of ``texts`` show each image."""
    shown: Counter[str] = Counter()
    for text in texts:
        shown.update(_images(text))
    return shown
