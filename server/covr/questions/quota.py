"""Per-form quotas: generation that stops drawing a form once it has enough (issue 36 item 2).

Why: ``covr balance`` cuts every form to the size of the rarest (paper App. C), so an unbounded
run over 100 real GQA images made 12,929 examples of which balancing kept 361 (2.8 %): counting
forms were filled hundreds of times over while ``choose_object`` had 20. With
``--per-template N`` the driver keeps at most about ``N`` examples of each form and stops asking
the engine for a form once it has them, so the rest of the run goes to the forms that are still
short, and a run ends when every form is full.

Why the output does not depend on workers, shards or timing: the quota is applied where the
examples are merged, in source-image order (:class:`FormQuota`), so which examples are kept is
decided by that order alone. What the engine is told (:attr:`FormQuota.full`) only lets it skip
work: a form full after the images merged so far is full for every later image too (counts only
grow), and each form draws from a random stream of its own (``ImageGenerator._form_rng``), so
skipping it changes no other form's examples. The two examples of one text (its two answers)
are kept or dropped together; a pair may take a form one past ``N``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass
class FormQuota:
    """Which examples a run keeps, in merge order; ``limit`` ``None`` keeps every example."""

    limit: int | None = None
    made: Counter[str] = field(default_factory=Counter)
    over: Counter[str] = field(default_factory=Counter)
    """Examples not kept because their form was full, per form."""
    full: set[str] = field(default_factory=set)
    _open: tuple[str, str] | None = None

    def admit(self, example: Mapping[str, Any]) -> bool:
        """Whether ``example`` is kept (counted when it is)."""
        form = str(example.get("template", ""))
        key = (form, str(example.get("utterance", "")))
        if self.limit is not None and self.made[form] >= self.limit and key != self._open:
            self.over[form] += 1
            return False
        self.made[form] += 1
        # the first example of a text opens a pair its second example may complete
        self._open = None if key == self._open else key
        if self.limit is not None and self.made[form] >= self.limit:
            self.full.add(form)
        return True

    def done(self, forms: Iterable[str]) -> bool:
        """Whether every one of ``forms`` is full (the run can stop)."""
        return self.limit is not None and all(f in self.full for f in forms)

    def report(self, forms: Iterable[str], dropped: Mapping[str, int]) -> dict[str, Any]:
        """Per form: examples wanted, made, not kept over the quota, and why candidates were
        dropped (the ``form/reason`` keys of the run's drop counter)."""
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
                "dropped": reasons,
            }
        return out
