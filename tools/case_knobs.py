"""Knobs that decide each transcript, computed with the reference engine in-process.

Not a test module: ``tests/conformance/corpus/test_case_knobs.py`` uses it for the hand-written cases, and run
as a script it writes (or, with ``--check``, checks) the ``knobs:`` line of every generated
transcript, which ``conformance/oracle/generate.py`` cannot compute quickly itself because
conformance never imports the reference (it would have to replay every change through a
subprocess). Run ``python -m conformance.oracle.generate`` first, then this script.

    python tools/case_knobs.py [--check] [FOLDER]     # generated: the list is exactly the computed one
    python tools/case_knobs.py --add conformance/cases  # hand-written: add what is missing, keep the rest
    python tools/case_knobs.py --weak conformance/cases # knobs a case names that no single change shows
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path
from typing import Any, Mapping

if __package__ in (None, ""):  # run as a script: the project root on the path
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from conformance.oracle.generate import KNOBS_FIELD
from conformance.oracle.knobs import Ask, deciding_knobs
from conformance.corpus.transcripts import GENERATED_DIR, Transcript, discover
from reference_impl.errors import EngineError
from reference_impl.rules import Rules
from reference_impl.server import ProtocolError, Server
from reference_impl.state import MatchState


def in_process() -> Ask:
    """Protocol v1 answered by the reference's server object, without JSON or a pipe.

    The rules built from each document are kept (by the document's identity, which
    ``changed_documents`` keeps stable): building them is most of a short replay's cost.
    """
    server = Server()
    built: dict[int, tuple[Mapping[str, Any], Rules]] = {}

    def ask(command: str, **fields: Any) -> dict[str, Any]:
        try:
            if command == "match":
                document = fields["document"]
                if id(document) not in built:
                    built[id(document)] = (document, Rules.from_document(document))  # the document kept alive
                server.state = MatchState(built[id(document)][1], fields.get("state"))
                return {"ok": True}
            return server.handlers[command](fields)
        except (ProtocolError, EngineError) as exc:
            return {"errored": {"message": str(exc)}}
        except Exception as exc:  # noqa: BLE001 - as the server: an odd knob mix answers `errored`, never crashes the test
            return {"errored": {"message": f"internal error: {type(exc).__name__}: {exc}"}}

    return ask


def case_knobs(case: Transcript, ask: Ask | None = None) -> list[str]:
    """The knobs that decide the case under the reference."""
    match: Mapping[str, Any] | None = case.match
    return deciding_knobs(ask or in_process(), case.profiles, case.deals, match)


WIDTH = 110


def knobs_field(knobs: list[str], comment: str = "") -> str:
    """``knobs: [a, b]`` wrapped as the hand-written cases write long lists."""
    lines, line = [], "knobs: ["
    for index, knob in enumerate(knobs):
        item = knob + (", " if index < len(knobs) - 1 else "")
        if len(line) + len(item) > WIDTH and line.strip() not in ("knobs: [", ""):
            lines.append(line.rstrip())
            line = "  "
        line += item
    lines.append(line + "]" + (f"  {comment}" if comment else ""))
    return "\n".join(lines)


def with_knobs(text: str, knobs: list[str]) -> str:
    """The transcript text with its knobs field replaced (a trailing comment is kept)."""
    found = KNOBS_FIELD.search(text)
    if found is None:
        raise ValueError("no top-level 'knobs:' field")
    comment = re.search(r"\]\s*(#.*)$", found.group(0).splitlines()[0])
    return text[: found.start()] + knobs_field(knobs, comment.group(1) if comment else "") + text[found.end():]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python tools/case_knobs.py", description=__doc__.split("\n\n")[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true", help="fail if any knobs list is not exactly the computed one")
    mode.add_argument("--add", action="store_true", help="add the missing knobs, keep the listed ones (hand-written cases)")
    mode.add_argument("--weak", action="store_true",
                      help="list the knobs a case names that no single change shows (a case that may not test what it says)")
    parser.add_argument("folder", nargs="?", type=Path, default=GENERATED_DIR)
    args = parser.parse_args(argv)
    started, ask, stale = time.perf_counter(), in_process(), []
    cases = [item for item in discover([args.folder]) if isinstance(item, Transcript)]
    for case in cases:
        computed = case_knobs(case, ask)
        if args.weak:
            named = [knob for knob in case.knobs if knob not in computed]
            if named:
                stale.append(case.path)
                print(f"{case.id}: {', '.join(named)}")
            continue
        wanted = list(case.knobs) + [k for k in computed if k not in case.knobs] if args.add else computed
        if wanted != list(case.knobs):
            stale.append(case.path)
            if not args.check:
                case.path.write_text(with_knobs(case.path.read_text(encoding="utf-8"), wanted), encoding="utf-8")
    seconds = time.perf_counter() - started
    verb = "with knobs no change shows" if args.weak else "out of date" if args.check else "rewritten"
    print(f"{len(cases)} transcripts, {len(stale)} knobs lists {verb}, {seconds:.1f} s")
    for path in stale[:20] if args.check else []:
        print(f"  {path}", file=sys.stderr)
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
