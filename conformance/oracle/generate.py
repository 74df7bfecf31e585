"""Generated transcripts: seeded random legal play recorded from the reference implementation.

``python -m conformance.oracle.generate [--check] [--per-profile N] [--profile P]``

For each bundled profile, N full deals are played through protocol v1 against the reference
implementation, run as a subprocess (never imported): a seeded shuffle deals the cards and a
seeded choice among the sorted legal actions picks every action. Each deal is written to
``conformance/generated/<profile>/<nnn>.yaml`` with its legal sets and the state after the
deal. ``--check`` plays them again in memory and fails if any file differs or is missing.

The targeted deals listed in ``conformance/oracle/targeted.yaml`` (seeded deals that tell apart
a knob value few cases told apart; ``python tools/situations.py --search`` finds them and
writes the list) are played the same way, from the match state, cards and plans the list
gives, and written to ``conformance/generated/<profile>/targeted-<nnn>.yaml`` (an option,
``name+option``, has its targeted deals only, in its own folder); ``--check``
checks them too, and that no targeted transcript is left that the list no longer names.

The ``knobs:`` line is written empty: the knobs that decide a deal are found by changing
each knob alone and replaying the deal, which needs the reference in-process (conformance
never imports it). After writing, run ``python tools/case_knobs.py`` to fill the lines
(``--check`` there checks them); the check here ignores them.

Generated transcripts are checked against the hand-written ones, never the other way
round: before writing, the implementation must pass every hand-written case
(``thousand verify --cases conformance/cases``); otherwise nothing is written.
"""

from __future__ import annotations

import argparse
import random
import re
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable, Sequence

import yaml

from conformance.corpus.transcripts import CASES_DIR, GENERATED_DIR
from conformance.harness.process import ProtocolFailure
from conformance.harness.session import Session, Skipped
from conformance.harness.runner import DEFAULT_MATCH_STATE, REFERENCE_COMMAND
from spec.vocabulary import DECK, ExitCode
ENDING_EVENTS = {"deal_scored", "redeal", "match_won", "match_drawn"}
MAX_STEPS = 200  # a deal has far fewer actions; guards against an engine that never ends one
KNOBS_FIELD = re.compile(r"^knobs:[^\n]*(?:\n[ -][^\n]*)*", re.MULTILINE)  # the line and its continuations
EXPECTED_FIELDS = ("phase", "declarer", "contract", "trump", "tricks_won", "card_points", "marriages",
                   "deal_result", "scores", "bolts", "give_ups", "barrel", "winner")


class GenerationError(Exception):
    pass


def deal_cards(rng: random.Random) -> tuple[list[list[str]], list[str]]:
    deck = list(DECK)
    rng.shuffle(deck)
    hands = [sorted(deck[i * 7:(i + 1) * 7], key=DECK.index) for i in range(3)]
    return hands, sorted(deck[21:], key=DECK.index)


class Recorder:
    """Plays seeded deals on one reference process."""

    def __init__(self, command: Sequence[str], timeout: float) -> None:
        self.impl = Session(command, timeout)
        try:
            self.impl.start()
        except (ProtocolFailure, Skipped) as exc:
            raise GenerationError(f"the reference did not start: {exc}\n{self.impl.stderr_tail()}") from None

    def ask(self, command: str, **fields: Any) -> dict[str, Any]:
        reply = self.impl.request(command, **fields)
        if "skipped" in reply or "errored" in reply or reply.get("ok") is False:
            raise GenerationError(f"the reference answered {command!r} with {reply}\n{self.impl.stderr_tail()}")
        return reply

    def record(self, profile: str, document: dict[str, Any], number: int) -> dict[str, Any]:
        rng = random.Random(f"{profile}/{number}")  # str seeds are stable across runs and platforms
        hands, talon = deal_cards(rng)
        dealer = rng.randrange(3)
        deal = play_deal(self.ask, profile, document, rng, None, dealer, hands, talon, f"{profile}/{number:03d}")
        return {
            "id": f"{profile}/{number:03d}",
            "title": f"Random legal play, {profile}, deal {number}",
            "description": "Recorded from the reference implementation by conformance/oracle/generate.py "
                           "(seeded shuffle, seeded choice among the sorted legal actions).",
            "profiles": [profile], "knobs": [], "generated": True,
            "deals": [deal],
        }

    def close(self) -> None:
        self.impl.stop()


Ask = Callable[..., dict[str, Any]]


def play_deal(ask: Ask, profile: str, document: dict[str, Any], rng: random.Random, match: dict[str, Any] | None,
              dealer: int, hands: list[list[str]], talon: list[str], name: str, give_up: float = 0.1,
              choose: Callable[[tuple[str, ...], dict[str, Any]], str | None] | None = None) -> dict[str, Any]:
    """One deal played from ``match`` by a seeded choice among the sorted legal actions (giving
    up, where it is legal, kept among them with the chance ``give_up``): the deal's transcript
    entry (its steps with their legal sets and the state after it). ``choose``, given the
    legal actions and the state, picks in place of the seeded choice (a position's plans)."""
    ask("match", profile=profile, document=document, state={**DEFAULT_MATCH_STATE, **(match or {})})
    ask("deal", dealer=dealer, hands=hands, talon=talon)
    steps: list[dict[str, Any]] = []
    while len(steps) < MAX_STEPS:
        legal = sorted(ask("legal")["actions"])
        if not legal:
            break
        if choose is None:
            action = rng.choice(_playable(legal, rng, give_up))
        else:
            action = choose(tuple(legal), ask("state")["state"]) or legal[0]
        events = ask("apply", action=action)["events"]
        steps.append({"action": action, "legal": legal})
        if any(event.get("type") in ENDING_EVENTS for event in events):
            break
    else:
        raise GenerationError(f"{name}: the deal did not end within {MAX_STEPS} actions")
    state = ask("state")["state"]
    expect = {field: state[field] for field in EXPECTED_FIELDS if field in state}
    return {"dealer": dealer, "hands": hands, "talon": talon, "steps": steps, "expect": expect}


# --- targeted deals ---------------------------------------------------------------------------
# Seeded deals kept because they tell apart a knob value that few cases tell apart under their
# profile (tools/situations.py searches for them and lists them in TARGETED_FILE): each entry
# names its profile and seed, and, where the search chose them, the match state the deal starts
# from and the cards. The seed deals the cards (unless given) and chooses every action as above.

TARGETED_FILE = Path(__file__).with_name("targeted.yaml")


def load_targeted(path: Path = TARGETED_FILE) -> list[dict[str, Any]]:
    """The targeted deals' entries, in order."""
    if not path.is_file():
        return []
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    entries = data.get("targeted") or []
    if not isinstance(entries, list) or not all(isinstance(e, dict) and {"profile", "seed"} <= set(e) for e in entries):
        raise GenerationError(f"{path.name}: expected 'targeted', a list of entries with a profile and a seed")
    return entries


def targeted_path(profile: str, number: int) -> Path:
    return Path(profile) / f"targeted-{number:03d}.yaml"


def record_entry(ask: Ask, entry: dict[str, Any], document: dict[str, Any], number: int) -> dict[str, Any]:
    """The transcript of a targeted deal; ``number`` counts the profile's entries from 0."""
    profile, seed = entry["profile"], entry["seed"]
    rng = random.Random(f"targeted/{seed}")
    hands, talon = deal_cards(rng)
    dealer = rng.randrange(3)
    if "hands" in entry:
        hands, talon, dealer = entry["hands"], entry["talon"], entry["dealer"]
    match = entry.get("match")
    name = targeted_path(profile, number).with_suffix("").as_posix()
    give_up = entry.get("give_up", 0.1)
    choose = None
    if "position" in entry:  # a position's plans (positions.plan_fields), the seeded choice playing the rest
        from conformance.oracle import positions

        plan = entry["position"]
        laid_out = positions.Position(
            "targeted", match or {}, dealer, tuple(tuple(hand) for hand in hands), tuple(talon), plan["declarer"],
            tuple(tuple((when, action) for when, action in seat) for seat in plan["plans"]), plan["scripted"],
            plan["least_contract"])
        choose = positions.chooser(laid_out, lambda legal, state: rng.choice(_playable(list(legal), rng, give_up)))
    deal = play_deal(_strict(ask), profile, document, rng, match, dealer, hands, talon, name, give_up, choose)
    transcript = {
        "id": name,
        "title": f"Targeted random legal play, {profile}, seed {seed}",
        "description": "Recorded from the reference implementation by conformance/oracle/generate.py from "
                       "conformance/oracle/targeted.yaml (a deal tools/situations.py kept because it tells apart a "
                       "knob value few cases tell apart; " + ("the planned actions of a position, then " if "position" in entry
                                                              else "") + "seeded choice among the sorted legal actions).",
        "profiles": [profile], "knobs": [], "generated": True,
    }
    if match:
        transcript["match"] = match
    transcript["deals"] = [deal]
    return transcript


def _strict(ask: Ask) -> Ask:
    def strict(command: str, **fields: Any) -> dict[str, Any]:
        reply = ask(command, **fields)
        if "skipped" in reply or "errored" in reply or reply.get("ok") is False:
            raise GenerationError(f"the reference answered {command!r} with {reply}")
        return reply
    return strict


def _playable(legal: list[str], rng: random.Random, give_up: float = 0.1) -> list[str]:
    """The actions to choose from: giving up only now and then, so most deals are played out
    (a targeted deal may ask for more: then giving up alone, with the chance ``give_up``)."""
    others = [action for action in legal if action != "give_up"]
    if give_up > 0.1 and others != legal:
        return ["give_up"] if rng.random() < give_up else others
    return legal if not others or rng.random() < 0.1 else others


def to_yaml(transcript: dict[str, Any]) -> str:
    """Block style on top, one flow-style line per step: compact and readable in a diff."""
    def flow(value: Any) -> str:
        text = str(yaml.safe_dump(value, default_flow_style=True, sort_keys=False, width=10**6))
        return text.removesuffix("...\n").strip()  # a lone scalar ends its document with "..."

    deal = transcript["deals"][0]
    lines = [f"{key}: {flow(transcript[key])}" for key in ("id", "title", "description", "profiles", "knobs", "generated")
             + (("match",) if "match" in transcript else ())]
    lines += ["deals:", f"  - dealer: {deal['dealer']}", f"    hands: {flow(deal['hands'])}",
              f"    talon: {flow(deal['talon'])}", "    steps:" + ("" if deal["steps"] else " []")]
    lines += [f"      - {flow(step)}" for step in deal["steps"]]
    lines.append(f"    expect: {flow(deal['expect'])}")
    return "\n".join(lines) + "\n"


def profile_names(selected: Sequence[str], targeted: Sequence[dict[str, Any]] = ()) -> list[str]:
    """The bundled profiles, then the options (``name+option``) that have targeted deals."""
    import variants

    names = [info.name for info in variants.list_profiles()]
    names += [name for name in variants.all_names() if name not in names and any(e["profile"] == name for e in targeted)]
    return [name for name in names if not selected or name in selected]


def generate(names: Sequence[str], per_profile: int, command: Sequence[str], timeout: float,
             targeted: Sequence[dict[str, Any]] = ()) -> dict[Path, str]:
    """Relative path below the generated folder -> file text: ``per_profile`` seeded deals of
    bundled profile, and the ``targeted`` entries of the profiles and options (``load_targeted``)."""
    import variants

    bundled = {info.name for info in variants.list_profiles()}
    files: dict[Path, str] = {}
    recorder = Recorder(command, timeout)
    try:
        for name in names:
            document = variants.resolve(name).to_document()
            # an option differs from its profile in a few knobs: only targeted deals, found for them
            for number in range(per_profile if name in bundled else 0):
                files[Path(name) / f"{number:03d}.yaml"] = to_yaml(recorder.record(name, document, number))
            for number, entry in enumerate(entry for entry in targeted if entry["profile"] == name):
                files[targeted_path(name, number)] = to_yaml(record_entry(recorder.ask, entry, document, number))
    finally:
        recorder.close()
    return files


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m conformance.oracle.generate", description=__doc__.split("\n\n")[1])
    parser.add_argument("--check", action="store_true", help="fail if any generated file differs or is missing")
    parser.add_argument("--per-profile", type=int, default=100, metavar="N", help="deals per profile (default 100)")
    parser.add_argument("--profile", action="append", default=[], metavar="P", help="only this profile (repeatable)")
    parser.add_argument("--out", type=Path, default=GENERATED_DIR, help="folder (default conformance/generated)")
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds per reply of the reference")
    parser.add_argument("impl_command", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    command = [c for c in args.impl_command if c != "--"] or list(REFERENCE_COMMAND)
    try:
        targeted = load_targeted()
        names = profile_names(args.profile, targeted)
        files = generate(names, args.per_profile, command, args.timeout, targeted)
    except (GenerationError, ProtocolFailure) as exc:
        print(f"generate: {exc}", file=sys.stderr)
        return ExitCode.USAGE
    if args.check:
        return check(files, args.out, names)
    if not passes_hand_written_cases(command):
        print("generate: the implementation fails hand-written cases (above); nothing written", file=sys.stderr)
        return ExitCode.FAILED
    for relative, text in files.items():
        path = args.out / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    for path in stale_targeted(files, args.out, names):
        path.unlink()
    print(f"wrote {len(files)} transcripts to {args.out}; now run python tools/case_knobs.py to fill their knobs")
    return ExitCode.PASSED


def passes_hand_written_cases(command: Sequence[str]) -> bool:
    """Run the hand-written corpus against the recording implementation, as `thousand verify` does."""
    run = subprocess.run([sys.executable, "-m", "conformance.cli", "verify", "--cases", str(CASES_DIR),
                          "--jobs", "2", "--", *command], capture_output=True, text=True)
    if run.returncode != 0:
        print(run.stdout[-4000:], file=sys.stderr)
    return run.returncode == 0


def _without_knobs(text: str) -> str:
    """The text without its knobs field, which tools/case_knobs.py fills and checks."""
    return KNOBS_FIELD.sub("knobs: []", text, count=1)


def stale_targeted(files: dict[Path, str], folder: Path, names: Sequence[str]) -> list[Path]:
    """Targeted transcripts of these profiles that ``targeted.yaml`` no longer lists."""
    return sorted(path for name in names for path in (folder / name).glob("targeted-*.yaml")
                  if path.relative_to(folder) not in files)


def check(files: dict[Path, str], folder: Path, names: Sequence[str] = ()) -> int:
    problems = [f"not in {TARGETED_FILE.name}: {path}" for path in stale_targeted(files, folder, names)]
    for relative, text in sorted(files.items()):
        path = folder / relative
        if not path.is_file():
            problems.append(f"missing: {path}")
        elif _without_knobs(path.read_text(encoding="utf-8")) != _without_knobs(text):
            problems.append(f"differs: {path}")
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        print(f"{len(problems)} generated transcript(s) out of date; run python -m conformance.oracle.generate", file=sys.stderr)
        return ExitCode.FAILED
    print(f"{len(files)} generated transcripts up to date")
    return ExitCode.PASSED


if __name__ == "__main__":
    sys.exit(main())
