"""One record of a wrong answer, one signature, one reader of known root causes (issue 48).

A **finding** is one observation where an implementation answered otherwise than the
oracle (a transcript's expected value, or the reference playing the same actions): where
(case or fuzz trial, deal, step, action), what (the kind of observation, its phase and the
normalised name of the difference), expected and got, and the knobs that decide it.
``thousand verify`` records one per failed check, ``thousand fit`` one per difference left
in its residual, ``thousand fuzz`` one per divergence; all three sign them with
``signature`` alone, so that the same mistake reads the same whichever tool met it. The
oracle's comparison (``conformance.oracle.observe.compare``) makes findings too, as it
observes them: unnamed (the kind of observation, the raw ``detail``, the oracle's state
``before``), then named by ``observe.findings`` as the runner names a failed check.

A **root cause** (``RootCause``) is a set of findings with one identity: a report's root
cause (``groups`` and ``further`` of spec/schema/report.schema.json) stands for the
signatures it gathers, fit's residual for the cases whose findings it gathers, with its
verdict. ``Known`` reads such a report, whichever tool wrote it, and explains exactly the
findings whose signature is one of a known cause's: never by knobs in common, which would
hide a second mistake decided by the same rules.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any, Mapping, Sequence

from spec.vocabulary import ResidualVerdict


class Observed(Enum):
    """The kind of observation a finding reads."""

    LEGAL = "legal"  # the legal set before an action
    REFUSAL = "refusal"  # a refusal expected: accepted instead, or refused for another reason
    REFUSED = "refused"  # an action the oracle accepts, refused
    UNCHANGED = "unchanged"  # a refusal that changed the state
    EVENT = "event"  # the events of a reply
    STATE = "state"  # one field of the state after a step
    TO_ACT = "to_act"  # the player to act before a step
    BROKEN = "broken"  # the run broke off: an error, a timeout, a protocol failure
    # the oracle's record and the implementation's end otherwise (``ends deal_over vs error``):
    # only an unnamed finding of observe's comparison has it; named, it is a broken run's
    # (``record: ...``)
    RECORD = "record"


# the runner's name of each check, as reports write it (spec/schema/report.schema.json)
CHECKS = {Observed.LEGAL: "legal", Observed.REFUSAL: "refusal", Observed.REFUSED: "accepted",
          Observed.UNCHANGED: "unchanged", Observed.EVENT: "events", Observed.STATE: "state",
          Observed.TO_ACT: "player"}


def signature(kind: Observed, phase: str, name: str) -> str:
    """The one signature of a finding: equal for the same mistake in any case, deal or tool.
    ``legal[play]: unexpected cards that trump``, ``event[play] missing bolt``, ``state.scores``,
    ``to_act[auction]``; a broken run's name is its whole signature (``timeout: ...``)."""
    if kind is Observed.STATE:
        return f"state.{name}"
    if kind is Observed.EVENT:
        return f"event[{phase}] {name}"
    if kind is Observed.TO_ACT:
        return f"to_act[{phase}]"
    if kind is Observed.BROKEN:
        return name
    return f"{kind.value}[{phase}]: {name}"


_SIGNED = re.compile(r"(legal|refusal|refused|unchanged)\[([^\]]*)\]: (.*)|event\[([^\]]*)\] (.*)|to_act\[([^\]]*)\]|state\.(.*)",
                     re.DOTALL)


def parsed(signed: str) -> tuple[Observed, str, str]:
    """(kind, phase, name) of a signature as ``signature`` writes it (a report's): the inverse
    of ``signature``, so that a finding read from a report is the finding that was written."""
    match = _SIGNED.fullmatch(signed)
    if match is None:
        return Observed.BROKEN, "", signed
    kind, phase, name, event_phase, event, turn, field_name = match.groups()
    if kind is not None:
        return Observed(kind), phase, name
    if event_phase is not None:
        return Observed.EVENT, event_phase, event
    if turn is not None:
        return Observed.TO_ACT, turn, ""
    return Observed.STATE, "", field_name


def broken_signature(outcome: str, message: str) -> str:
    """The signature of a run that broke off without a finding of the game (an error, a
    timeout, a case bug): its outcome and the head of its message, digits folded."""
    head = message.split(":", 1)[0] if outcome != "case_bug" else "the transcript is wrong"
    return f"{outcome}: {re.sub(r'[0-9]+(?:[.][0-9]+)?', 'N', head)[:120]}"


@dataclass(frozen=True)
class Finding:
    """One wrong answer: where, what (kind, phase, name), expected and got, the deciding knobs.
    As observe's comparison first makes it, it is unnamed (``name`` "", no knobs) and holds
    the raw ``detail`` and the oracle's state ``before``; ``observe.findings`` names it."""

    kind: Observed
    phase: str
    name: str  # the normalised difference ("missing bolt", "scores", "expected pass_limit, accepted")
    knobs: tuple[str, ...] = ()  # the knobs that decide the check itself
    upstream: tuple[str, ...] = ()  # the knobs that decide what the check reads (the deal's score)
    message: str = ""
    expected: Any = None
    actual: Any = None
    where: Mapping[str, Any] = field(default_factory=dict)  # deal, step, action (and case_id: the case or "fuzz")
    outcome: str = ""  # a broken run's outcome (error, timeout, ...)
    # What observe's comparison reads before the finding is named (``observe.named``), kept for
    # fit's evidence: the raw difference (a legal set's ``missing 9S``, ``state.scores``, a
    # reply's ``unexpected bolt``, ``ends deal_over vs error``), one of several that one named
    # finding may stand for; and the oracle's state before the step (what a legal set is read
    # against). "" and None in the runner's findings.
    detail: str = ""
    before: Any = None

    @property
    def signature(self) -> str:
        return signature(self.kind, self.phase, self.name)

    @property
    def deal(self) -> int:
        deal: int = self.where.get("deal") or 0
        return deal

    @property
    def step(self) -> int:
        step: int = self.where.get("step") or 0
        return step

    @property
    def action(self) -> str | None:
        action: str | None = self.where.get("action")
        return action

    @property
    def at(self) -> str:
        """Where in the case: ``deal 1 step 7 (play 9S)`` or ``deal 1 the deal``."""
        return f"deal {self.deal} " + ("the deal" if self.step == 0 else f"step {self.step} ({self.action})")

    @property
    def place(self) -> str:
        """``at`` after the case (``fuzz`` for a fuzz trial): ``fuzz deal 1 step 7 (play 9S)``."""
        return f"{self.where.get('case_id')} {self.at}"

    @property
    def check(self) -> str:
        """The check's name as reports write it."""
        return (self.outcome or "error") if self.kind is Observed.BROKEN else CHECKS[self.kind]

    @property
    def deciding(self) -> tuple[str, ...]:
        return self.knobs + tuple(k for k in self.upstream if k not in self.knobs)

    def to_json(self) -> dict[str, Any]:
        found = {"check": self.check, "signature": self.signature, "knobs": list(self.knobs), "message": self.message,
                 **{k: v for k, v in self.where.items() if k in ("deal", "step", "action") and v is not None},
                 "expected": self.expected, "actual": self.actual}
        return {**found, "upstream": list(self.upstream)} if self.upstream else found


def from_json(data: Mapping[str, Any]) -> Finding:
    """A finding as a report writes it (``Finding.to_json``)."""
    kind, phase, name = parsed(str(data.get("signature")))
    where = {k: data[k] for k in ("deal", "step", "action") if data.get(k) is not None}
    return Finding(kind, phase, name, tuple(str(k) for k in data.get("knobs") or ()),
                   tuple(str(k) for k in data.get("upstream") or ()), str(data.get("message", "")),
                   data.get("expected"), data.get("actual"), where,
                   str(data.get("check", "")) if kind is Observed.BROKEN else "")


def broken(outcome: str, message: str, where: Mapping[str, Any] | None = None) -> Finding:
    """The finding of a run that broke off (an error or timeout after earlier findings)."""
    return Finding(Observed.BROKEN, "", broken_signature(outcome, message), message=message,
                   where=dict(where or {}), outcome=outcome)


# --- root causes ----------------------------------------------------------------------------


@dataclass(frozen=True)
class RootCause:
    """A set of findings with one identity (DESIGN.md "Findings and root causes"): the signature
    it is named by, the signatures it gathers (a report's ``checks``), the knobs that decide it
    and the cases (or runs) whose findings it gathers. Fit's residual adds its verdict, how many
    observations show it, the first case that does and why, and the causes tangled with it."""

    signature: str
    knobs: tuple[str, ...] = ()
    cases: tuple[str, ...] = ()
    signatures: frozenset[str] = frozenset()  # every signature it gathers, its own included
    verdict: ResidualVerdict | None = None  # fit's residual: NO_KNOB, UNTRIED, BUG, PAIRED (TANGLED only while unfolded)
    observations: int = 0  # fit's residual: the observations that show it
    example: str = ""  # fit's residual: the first case that shows it, and where
    why: str = ""  # fit's residual: why the verdict
    hidden: tuple[RootCause, ...] = ()  # fit's residual: causes tangled with it, in the very observations it differs in


# --- known root causes (--known) -----------------------------------------------------------


class KnownError(Exception):
    """A --known file that is not a report: one line naming the file and what is wrong."""


@dataclass(frozen=True)
class Known:
    """Root causes already known, each as the set of signatures it stands for: a finding whose
    signature is one of them is no news; any other is, whatever knobs it shares with them."""

    causes: tuple[RootCause, ...] = ()  # each named by its headline, with the signatures of its findings
    source: str = ""

    def cause_of(self, found: str | Finding) -> str | None:
        """The headline of the known cause whose identity this finding (or signature) has, or None."""
        wanted = found.signature if isinstance(found, Finding) else found
        return next((cause.signature for cause in self.causes if wanted in cause.signatures), None)

    @classmethod
    def of(cls, report: Mapping[str, Any], source: str = "") -> Known:
        """The root causes of a report (``groups`` and ``further``), each with the signatures it
        gathers (its ``checks``: the first findings of its runs). A later finding of one of its
        runs is not the cause's: it may be a second mistake, which ``further`` names when it is."""
        causes = []
        for cause in [*(report.get("groups") or ()), *(report.get("further") or ())]:
            signatures = {str(cause.get("signature"))} | {str(c.get("signature")) for c in cause.get("checks") or ()}
            causes.append(RootCause(str(cause.get("signature")), tuple(str(k) for k in cause.get("knobs") or ()),
                                    tuple(str(c) for c in cause.get("cases") or ()), frozenset(signatures)))
        return cls(tuple(causes), source)

    @classmethod
    def read(cls, path: Path) -> Known:
        """The root causes of a report as ``thousand verify --report``, ``thousand fit --report``
        or ``thousand fuzz --report`` write it (spec/schema/report.schema.json); KnownError when
        it cannot be read or is not such a report."""
        from conformance.corpus import schemas

        try:
            data = schemas.read_report_json(path)  # as thousand report reads it: one reader of reports
        except schemas.ReportFileError as exc:
            raise KnownError(f"--known {exc}") from None
        problem = schemas.first_problem(schemas.report_validator(), data)
        if problem:
            raise KnownError(f"--known {path}: not a report as thousand verify, fit or fuzz --report writes it "
                             f"(spec/schema/report.schema.json): {problem}")
        return cls.of(data, str(path))


def first_of(found: Sequence[Finding]) -> Finding | None:
    """The finding a run, trial or case is signed by: the first met, in the order the checks
    read a step (the player to act, the legal set, the reply and its events in the order they
    happen, then the state fields the reply's scoring writes). A missing ``barrel_left`` comes
    before the ``state.next_dealer`` derived from the same deal's end."""
    return found[0] if found else None
