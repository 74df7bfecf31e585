"""Acceptance figures of ``thousand fit`` (not a CI test: it prints tables).

``python benchmarks/fit.py variants [--count 30] [--seed 0] [--jobs 1] [--skip N] [--only INDEX]``
    Seeded random house variants (1 to 4 knob changes from a bundled profile, among the
    knobs that apply, values from the same domain fit searches), each served by
    ``thousand-reference --rules SECRET``; fit starts from the bundled profile. Per variant:
    the changed knobs, the fitted knobs, whether they are the same, the residual cases, and
    (when the fitted rules are not the secret ones) whether the reference under the fitted
    rules plays like the secret rules on every case of the corpus.
``python benchmarks/fit.py realistic [--count 30] [--seed S] [--developing] [--no-ask] [--jobs 1] [--only INDEX]``
    Seeded secret variants as engines really are: 6 to 15 knob changes over at least 4 rule
    sections, values drawn from each knob's whole domain (numbers anywhere in a plausible
    part of the schema's range, most of them values no bundled profile uses; a marriage table
    or a list of redeal rules among the knobs drawn from), always one
    coupled change of the bid cap (ceiling, marriage_needed_above and max_bid together);
    every third variant has one mutant of a rule no knob expresses applied, drawn among those
    the variant's rules can show (``python -m mutants.serve --rules``), every third after it declares one action word
    unsupported (``benchmarks/partial_engine.py``). Per variant and in total: the secret knob
    values recovered (exactly, or equivalently on the corpus), wrong values adopted (a value is
    wrong when putting the secret one back in the fitted rules changes play on the profile's
    cases, and so does putting back the secret values of its whole section, or for a knob of
    the bid cap the secret's ceiling, marriage condition and maximum together, and so does putting back
    with it the secret value of each knob fit lists as equally consistent in its place; of
    those, apart, the ones the implementation's observations cannot tell from the secret
    value: ``untold``), secret values missed (left at the profile's own where putting the secret one back changes play,
    the same test; apart, those ``untold`` from the profile's value), whether the fitted rules play like the secret ones on the profile's cases (as far
    as the implementation shows them: a case of a partial one ends at its first action declared
    unsupported, and nothing after it is anyone's evidence), whether
    the residual names exactly the mutant's mistake (``mutants.matrix.names_the_mistake``; with
    no residual, a mutant that knob values express on the corpus counts as named when every
    value that changes play expresses it, as ``catalogue``'s ``own knob``; a value that changes
    play (adopted or missed) is counted apart as expressing the mutant, not as wrong, when it is of a knob the
    mistake is about and reproduces observations of the mutant that the secret value does not,
    or when it changes play only on top of such values: ``only_with``),
    the fit's time and its ratio to ``thousand verify`` of the profile. The fit is what
    ``thousand fit`` does, the search and then its questions (``fit.answered``); a wrong value
    asking reported untold (no question it found tells it apart) is listed apart, and
    ``--no-ask`` scores the search alone. ``--only INDEX`` fits one variant of the same draw.
``python benchmarks/fit.py mutants [--profile polish] NAME...``
    fit against mutants (``python -m mutants.serve NAME``): residual cases and signatures.
``python benchmarks/fit.py catalogue --matrix MATRIX.json [--jobs 2] [NAME ...]``
    fit against each mutant (or those named) under the profile whose runs kill it most
    often (from a kill matrix written by ``python -m mutants --json``). A clean fit says
    knobs express the mutant on those cases: ``own knob`` when the fitted knobs are among
    those the catalogue says the mutant concerns (a mistake about a knob), ``other knobs``
    otherwise (a mistake no knob names that some knob values imitate on those cases: the
    acceptance wants none); else fit reports ``residual``.
``python benchmarks/fit.py timing [--profile polish]``
    the wall time of ``thousand verify --profile P`` and of ``thousand fit --profile P`` on a
    two-knob variant of P.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Iterator, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import variants  # noqa: E402
from conformance.oracle import evidence, fit, observe, residual  # noqa: E402
from spec.vocabulary import EditableRuleValues as Rules  # noqa: E402
from conformance.harness.findings import RootCause  # noqa: E402
from conformance.harness.runner import REFERENCE_COMMAND  # noqa: E402
from conformance.corpus.transcripts import CASES_DIR, GENERATED_DIR, Transcript, discover  # noqa: E402

PROFILES = ("polish", "classic", "skill-games", "gambler-club", "repino-2013", "polish-tournament")


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


# (profile, knob, value in JSON) of values that play as the profile's own on every deal
# (spec/equivalent-values.yaml): a secret change to one of them changes nothing to find.
SAME_PLAY = {(e.profile, e.knob, _json(e.value)) for e in variants.load_equivalents()}


def random_variant(rng: random.Random, folder: Path, name: str) -> tuple[str, list[fit.Change], Path]:
    """A consistent house file: 1 to 4 single-knob changes, each among the knobs that apply,
    none to a value that plays as the profile's own on every deal."""
    while True:
        profile_name = rng.choice(PROFILES)
        profile = variants.resolve(profile_name)
        rules: Rules = variants.thaw(profile.rules)
        changes: list[fit.Change] = []
        for _ in range(rng.randint(1, 4)):
            knobs = [k for k in fit.applying_knobs(profile, rules) if k not in {c.knob for c in changes}]
            knob = rng.choice(knobs)
            section, _, key = knob.partition(".")
            drawn = [v for v in fit.knob_domain(knob, rules[section][key]) if (profile_name, knob, _json(v)) not in SAME_PLAY]
            if not drawn:
                continue
            change = fit.Change(knob, rng.choice(drawn))
            changes.append(change)
            rules = fit.set_knob(rules, [change])
        if not changes:
            continue
        path = folder / name / f"{name}.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(fit.house_yaml(profile, rules, [], name, "a secret table"), encoding="utf-8")
        try:
            variants.resolve(str(path))
            return profile_name, changes, path
        except variants.ProfileError:
            continue  # inconsistent knob values (validate would refuse them): draw again


def identical_on_corpus(cases: list[Transcript], one: dict[str, Any], other: dict[str, Any], jobs: int,
                        partial: evidence.Partial = evidence.Partial()) -> bool:
    """Do the two rule sets make the reference show the same on every case of the corpus, as
    far as an implementation declaring ``partial`` unsupported shows it (what follows an
    action it does not play is no one's evidence)?"""
    pool = observe.Pool(REFERENCE_COMMAND, jobs, batch=True)
    try:
        for case in cases:
            profile = case.profiles[0]
            first, second = (evidence.shown(pool.observers[0].observe(case, profile, document), partial)[0]
                             for document in (one, other))
            if observe.compare(first, second):
                return False
    finally:
        pool.close()
    return True


def fitted(profile: str, cases: list[Transcript], command: list[str], jobs: int,
           ask: bool = False) -> tuple[fit.FitResult, fit.Fitter, float]:
    """A fit of the implementation from the profile, the fitter (closed) and its wall time;
    with ``ask``, what ``thousand fit`` reports: the search, then its questions."""
    started = time.monotonic()
    fitter = fit.Fitter(profile, cases, command, jobs)
    try:
        result = fitter.run()
        if ask:
            result = fit.answered(fitter, variants.resolve(profile), result, None)
    finally:
        fitter.close()
    return result, fitter, time.monotonic() - started


def run_variants(args: argparse.Namespace) -> None:
    all_cases = [c for c in discover([CASES_DIR, GENERATED_DIR]) if isinstance(c, Transcript)]
    rng = random.Random(args.seed)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for number in range(args.count):
            name = f"secret-{number}"
            profile_name, changes, path = random_variant(rng, Path(tmp), name)
            if number < args.skip:
                continue  # drawn (the random sequence stays the same) but not fitted again
            cases = [c for c in all_cases if profile_name in c.profiles]
            result, _fitter, seconds = fitted(profile_name, cases, [*REFERENCE_COMMAND, "--rules", str(path)], args.jobs)
            profile = variants.resolve(profile_name)
            secret = variants.resolve(str(path))
            secret_rules = variants.thaw(secret.rules)
            wanted = sorted(fit.changed_knobs(profile, secret_rules))
            found = sorted(fit.changed_knobs(profile, result.rules))
            exact = result.rules == secret_rules
            if exact:
                same = "yes (same rules)"
            else:
                fitted_document = {**profile.to_document(), "rules": result.rules}
                same = "yes" if identical_on_corpus(all_cases, fitted_document, secret.to_document(), args.jobs) else "NO"
            rows.append((number, profile_name, wanted, found, wanted == found, len(result.residual), same, seconds))
            values = ", ".join(f"{k}: {result.rules[k.split('.')[0]][k.split('.')[1]]!r}" for k in found)
            print(f"{number:3d} {profile_name:18s} secret {', '.join(c.text() for c in changes)}\n"
                  f"    fitted values {values or '-'}\n"
                  f"    fitted {found} names-exactly={wanted == found} residual={len(result.residual)} "
                  f"corpus-identical={same} {seconds:.0f} s", flush=True)
    named = sum(1 for r in rows if r[4])
    clean = sum(1 for r in rows if r[5] == 0)
    identical = sum(1 for r in rows if str(r[6]).startswith("yes"))
    print(f"\n{len(rows)} variants: fitted rules reproduce the secret implementation on all of P's cases in "
          f"{clean}; identical on the whole corpus in {identical} (the same rules, or checked on every case); "
          f"exactly the changed knobs named in {named}; median fit {sorted(r[7] for r in rows)[len(rows) // 2]:.0f} s")


def run_mutants(args: argparse.Namespace) -> None:
    cases = fit.cases_for({args.profile}, [])
    for name in args.names:
        fitter = fit.Fitter(args.profile, cases, [sys.executable, "-m", "mutants.serve", name], args.jobs)
        started = time.monotonic()
        try:
            result = fitter.run()
        finally:
            fitter.close()
        knobs = fit.changed_knobs(variants.resolve(args.profile), result.rules)
        groups = fit.residual_groups(result.residual)
        top = "; ".join(f"{len(ids)}x {signature}" for signature, ids, _ in groups[:2]) or "-"
        print(f"{name:38s} knobs {knobs or '-'} residual {len(result.residual)} cases; top: {top} "
              f"({time.monotonic() - started:.0f} s)", flush=True)


def run_timing(args: argparse.Namespace) -> None:
    profile = variants.resolve(args.profile)
    rules: Rules = variants.thaw(profile.rules)
    rng = random.Random(1)
    with tempfile.TemporaryDirectory() as tmp:
        for attempt in range(50):
            _, changes, path = random_variant(rng, Path(tmp), f"timing-{attempt}")
            text = path.read_text(encoding="utf-8")
            if f"extends: {args.profile}\n" in text and len(changes) == 2:
                break
        thousand = [sys.executable, "-m", "conformance.cli"]
        started = time.monotonic()
        subprocess.run([*thousand, "verify", "--profile", args.profile], capture_output=True, check=False)
        verify_seconds = time.monotonic() - started
        started = time.monotonic()
        done = subprocess.run([*thousand, "fit", "--profile", args.profile, "--jobs", str(args.jobs), "--",
                               *REFERENCE_COMMAND, "--rules", str(path)], capture_output=True, text=True, check=False)
        fit_seconds = time.monotonic() - started
    del rules
    print(done.stdout.splitlines()[0] if done.stdout else done.stderr[-500:])
    print(f"secret changes: {', '.join(c.text() for c in changes)}")
    print(f"verify --profile {args.profile}: {verify_seconds:.1f} s; fit: {fit_seconds:.1f} s; "
          f"ratio {fit_seconds / verify_seconds:.1f} (wanted at most 10)")


def killing_profile(entry: dict[str, Any]) -> str | None:
    """The profile (or profile+option) of most of a mutant's killing runs, bundled ones first."""
    counts: dict[str, int] = {}
    for run in entry.get("killers") or []:
        profile = run.rsplit("@", 1)[1]
        counts[profile] = counts.get(profile, 0) + 1
    return min(counts, key=lambda p: ("+" in p, -counts[p], p)) if counts else None


def run_catalogue(args: argparse.Namespace) -> None:
    import json

    from mutants.catalogue import CATALOGUE

    matrix = {m["name"]: m for m in json.loads(Path(args.matrix).read_text(encoding="utf-8"))["mutants"]}
    all_cases = [c for c in discover([CASES_DIR, GENERATED_DIR]) if isinstance(c, Transcript)]
    names = args.names or list(CATALOGUE)
    tally = {"residual": 0, "own knob": 0, "other knobs": 0, "not killed": 0}
    for name in names:
        profile_name = killing_profile(matrix.get(name, {}))
        if profile_name is None:
            tally["not killed"] += 1
            print(f"{name:40s} not killed by the matrix's cases", flush=True)
            continue
        cases = [c for c in all_cases if profile_name in c.profiles]
        started = time.monotonic()
        fitter = fit.Fitter(profile_name, cases, [sys.executable, "-m", "mutants.serve", name], args.jobs)
        try:
            result = fitter.run()
        finally:
            fitter.close()
        profile = variants.resolve(profile_name)
        knobs = fit.changed_knobs(profile, result.rules)
        if result.residual:
            verdict = "residual"
            shown = "; ".join(f"{len(ids)}x {s}" for s, ids, _ in fit.residual_groups(result.residual)[:2])
        else:
            concerned = CATALOGUE[name].knobs
            own = bool(knobs) and all(any(k == c or k.startswith(c + ".") for c in concerned) for k in knobs)
            verdict = "own knob" if own else "other knobs"
            shown = f"clean with {knobs or 'no change'}"
        tally[verdict] += 1
        print(f"{name:40s} {profile_name:22s} {verdict:13s} {len(result.residual):3d} residual cases; {shown[:110]} "
              f"({time.monotonic() - started:.0f} s)", flush=True)
    print(f"\n{len(names)} mutants: " + ", ".join(f"{n} {k}" for k, n in tally.items()))


# --- realistic: engines as they really are -------------------------------------------------

COUPLED = ("auction.ceiling", "auction.marriage_needed_above", "auction.max_bid")
PARTIAL_WORDS = ("give_up", "marriage")


def drawn_value(rng: random.Random, knob: str, current: Any) -> Any:
    """A value from the knob's whole domain: any enum value, either boolean, a number anywhere
    in a plausible part of its range (amounts on a grid of 5, most of them unbundled)."""
    from conformance.oracle import candidates

    spec = candidates.value_schema(knob)
    kinds = candidates.kinds(knob)
    if "enum" in spec:
        return rng.choice([v for v in spec["enum"] if v != current] or spec["enum"])
    if "boolean" in kinds:
        return not current if isinstance(current, bool) else rng.choice([True, False])
    if "integer" in kinds:
        if "null" in kinds and current is not None and rng.random() < 0.25:
            return None
        low, high = spec.get("minimum", 0), spec.get("maximum", 1000)
        if knob in candidates.AMOUNT_KNOBS:
            return rng.randrange(max(low, 100) // 5, min(high, 600) // 5 + 1) * 5
        if knob in candidates.STEP_KNOBS:
            return rng.choice([5, 10, 15, 20, 25])
        anchor = current if isinstance(current, int) and current > 0 else (spec.get("default") or high // 10 or 10)
        top = min(high, max(low + 1, 3 * anchor))
        number = rng.randint(low, top)
        return number if anchor < 20 or number < 20 else number // 5 * 5
    if knob == "marriages.values" and isinstance(current, dict):
        return {suit: rng.randrange(4, 31) * 5 for suit in current}
    if knob == "redeals.rules" and isinstance(current, list):
        return rng.choice([[], current[:-1], current[1:]]) if current else []
    return current


def realistic_variant(rng: random.Random, folder: Path, name: str) -> tuple[str, list[fit.Change], Path]:
    """A consistent house file with 6 to 15 changes over at least 4 sections, the bid cap's
    three knobs among them."""
    for _attempt in range(500):
        profile_name = rng.choice(PROFILES)
        profile = variants.resolve(profile_name)
        rules: Rules = variants.thaw(profile.rules)
        wanted = rng.randint(6, 15)
        changes: dict[str, fit.Change] = {}
        for knob in COUPLED:
            section, _, key = knob.partition(".")
            value = drawn_value(rng, knob, rules[section][key])
            if knob == "auction.ceiling":
                value = rng.choice(["none", "marriages_held"])
            changes[knob] = fit.Change(knob, value)
        rules = fit.set_knob(rules, list(changes.values()))
        while len(changes) < wanted:
            knobs = [k for k in fit.searchable_knobs(profile, rules) if k not in changes]
            if not knobs:
                break
            knob = rng.choice(knobs)
            section, _, key = knob.partition(".")
            value = drawn_value(rng, knob, rules[section][key])
            if value == rules[section][key]:
                continue
            changes[knob] = fit.Change(knob, value)
            rules = fit.set_knob(rules, [changes[knob]])
        real = [c for c in changes.values() if variants.thaw(profile.rules[c.knob.split(".")[0]][c.knob.split(".")[1]]) != c.value]
        if len({c.knob.split(".")[0] for c in real}) < 4 or len(real) < 6:
            continue
        path = folder / name / f"{name}.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(fit.house_yaml(profile, rules, [], name, "a secret table"), encoding="utf-8")
        try:
            variants.resolve(str(path))
        except variants.ProfileError:
            continue
        return profile_name, real, path
    raise RuntimeError("no consistent realistic variant in 500 draws")


def fixed_rule_mutants() -> list[str]:
    """The mutants of a rule no knob expresses (a knob mutant only misreads a knob's value)."""
    from mutants.catalogue import CATALOGUE

    return [name for name, m in CATALOGUE.items() if getattr(m.build, "__name__", "") != "<lambda>"]


def concerned_knobs(mutant: str, profile: variants.ResolvedProfile) -> list[str]:
    """The knobs a mutant's mistake is about: those it names, and for a section it names the
    section's knobs but its switches (a knob others apply under): with the barrel off the
    switch ``barrel.enabled`` still applies, yet no barrel mistake can show."""
    from mutants.catalogue import CATALOGUE
    from variants.applicability import controlling_knobs
    from variants.schema import rule_sections

    found: list[str] = []
    for name in CATALOGUE[mutant].knobs:
        if "." in name:
            found.append(name)
            continue
        section = list(rule_sections()[name])
        switches = {k for knob in section for k in controlling_knobs(name, knob)}
        found += [f"{name}.{knob}" for knob in section if f"{name}.{knob}" not in switches]
    return [k for k in found if k.partition(".")[0] in profile.rules]


def shows_mistake(mutant: str, path: Path, profile_name: str, cases: list[Transcript]) -> bool:
    """Can the mutant's mistake show under the house rules at ``path``? Some knob it is about
    applies there, and on some case of the profile the mutant plays otherwise than the
    reference under the same rules (replayed until the first such case)."""
    profile = variants.resolve(str(path))
    inert = variants.inert_knobs(profile)
    if all(k in inert for k in concerned_knobs(mutant, profile)):
        return False
    document = variants.resolve(profile_name).to_document()
    reference = observe.Pool([*REFERENCE_COMMAND, "--rules", str(path)], batch=True)
    wrong = observe.Pool([sys.executable, "-m", "mutants.serve", "--rules", str(path), mutant])
    try:
        return any(observe.compare(reference.observers[0].observe(case, profile_name, document),
                                   wrong.observers[0].observe(case, profile_name, document)) for case in cases)
    finally:
        reference.close()
        wrong.close()


_VERIFY_SECONDS: dict[str, float] = {}


def verify_seconds(profile: str) -> float:
    """The wall time of ``thousand verify --profile P`` on the reference (once per profile)."""
    if profile not in _VERIFY_SECONDS:
        started = time.monotonic()
        subprocess.run([sys.executable, "-m", "conformance.cli", "verify", "--profile", profile],
                       capture_output=True, check=False)
        _VERIFY_SECONDS[profile] = time.monotonic() - started
    return _VERIFY_SECONDS[profile]


def run_realistic(args: argparse.Namespace) -> None:
    rng = random.Random(args.seed)
    mutants = fixed_rule_mutants()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for number in range(args.count):
            name = f"secret-{number}"
            profile_name, changes, path = realistic_variant(rng, Path(tmp), name)
            kind = ("plain", "mutant", "partial")[number % 3]
            cases = fit.cases_for({profile_name}, [])
            mutant = ""
            if kind == "mutant":  # one the variant's rules can show (no barrel mistake with the barrel off)
                drawn = rng.sample(mutants, len(mutants))
                mutant = next((m for m in drawn if number < args.skip or shows_mistake(m, path, profile_name, cases)),
                              drawn[0])
            word = rng.choice(PARTIAL_WORDS) if kind == "partial" else ""
            if number < args.skip:
                continue
            command = {"plain": [*REFERENCE_COMMAND, "--rules", str(path)],
                       "mutant": [sys.executable, "-m", "mutants.serve", "--rules", str(path), mutant],
                       "partial": [sys.executable, str(Path(__file__).resolve().parent / "partial_engine.py"), word,
                                   "--rules", str(path)]}[kind]
            result, fitter, seconds = fitted(profile_name, cases, command, args.jobs, ask=not args.no_ask)
            profile = variants.resolve(profile_name)
            secret = variants.thaw(variants.resolve(str(path)).rules)
            shows = evidence.Partial(frozenset({word} if word else ()))  # what the implementation plays
            identical = result.rules == secret or identical_on_corpus(
                cases, {**profile.to_document(), "rules": result.rules}, {**profile.to_document(), "rules": secret}, args.jobs,
                shows)
            exact = [c for c in changes if _value(result.rules, c.knob) == c.value]
            adopted = [k for k in fit.changed_knobs(profile, result.rules) if _value(result.rules, k) != _value(secret, k)]
            wrong = [] if identical else [k for k in adopted if _value(secret, k) not in result.equivalents.get(k, [])
                                          and changes_play(cases, profile, result.rules, k, _value(secret, k), args.jobs,
                                                           shows, _coupled_values(secret, k),
                                                           _in_its_place(secret, result.in_its_place.get(k, [])),
                                                           result.in_its_place.get(k, []))]
            # a secret value fit left at the profile's own, where putting it back changes play
            missed = [] if identical else [c.knob for c in changes if c not in exact and c.knob not in adopted
                                           and changes_play(cases, profile, result.rules, c.knob, c.value, args.jobs,
                                                            shows, _coupled_values(secret, c.knob))]
            equivalent = [c for c in changes if c not in exact and (identical or c.knob not in wrong + missed)]
            causes = residual.causes(result.weighed, fitter.impl_records, result.exercised, profile_name, cases=fitter.by_id)
            named, expressing = "", []
            if kind == "mutant":
                # the profile's own value may express the mutant as an adopted one does: a bolt for
                # two points plays as the profile's bolt for no points where the secret says no tricks
                expressing = [k for k in wrong + missed if about_the_mistake(mutant, k)
                              and expresses(fitter, result.rules, k, _value(secret, k), args.jobs)]
                expressing += [k for k in wrong + missed if expressing and k not in expressing
                               and only_with(cases, profile, result.rules, k, secret, expressing, args.jobs, shows)]
                named = mistake_named(mutant, causes, wrong + missed, expressing, identical)
                wrong = [k for k in wrong if k not in expressing]
                missed = [k for k in missed if k not in expressing]
            untold_wrong = [k for k in wrong if untold(fitter, result.rules, k, _value(secret, k), args.jobs,
                                                       _in_its_place(secret, result.in_its_place.get(k, [])),
                                                       result.in_its_place.get(k, []))]
            untold_missed = [k for k in missed if untold(fitter, result.rules, k, _value(secret, k), args.jobs)]
            ratio = seconds / verify_seconds(profile_name)
            # a wrong value asking put to the implementation and no question told from another
            # (the acceptance's "told apart by no position the asking found")
            unasked = {a.knob for a in result.asked if a.answer == "untold" and not a.budget_spent}
            asked_untold = [k for k in wrong if k in unasked]
            rows.append((number, kind, len(changes), len(exact), len(equivalent), wrong, identical, named, seconds, ratio,
                         result.unchecked, expressing, missed, untold_wrong, untold_missed, asked_untold))
            extra = {"mutant": f" mutant {mutant}", "partial": f" unsupported {word}"}.get(kind, "")
            print(f"{number:3d} {profile_name:18s} {kind:8s}{extra}\n"
                  f"    secret  {', '.join(c.text() for c in changes)}\n"
                  f"    fitted  {', '.join(f'{k}: {_value(result.rules, k)!r}' for k in fit.changed_knobs(profile, result.rules)) or '-'}\n"
                  f"    recovered {len(exact)} exactly + {len(equivalent)} equivalently of {len(changes)}; wrong adopted "
                  f"{wrong or 'none'}"
                  f"{' (the observations cannot tell from the secret value: ' + str(untold_wrong) + ')' if untold_wrong else ''}"
                  f"{' (no question asking found tells apart: ' + str(asked_untold) + ')' if asked_untold else ''}"
                  f"{'; missed ' + str(missed) if missed else ''}"
                  f"{' (the observations cannot tell from the profile value: ' + str(untold_missed) + ')' if untold_missed else ''}"
                  f"{'; expressing the mutant ' + str(expressing) if expressing else ''}; "
                  f"identical on the profile's cases: {'yes' if identical else 'NO'}; residual "
                  f"{len(causes)} cause(s){'; names the mistake: ' + named if named else ''}"
                  f"{'; answers not played ' + str(len(result.answers_missed)) if result.answers_missed else ''}; unchecked steps "
                  f"{result.unchecked}; {seconds:.0f} s = {ratio:.1f}x verify\n"
                  f"    where the time goes: {phases(fitter)}"
                  f"{''.join(chr(10) + '    asked ' + a.text() for a in result.asked)}", flush=True)
    _realistic_totals(rows)


def phases(fitter: fit.Fitter) -> str:
    """The fit's phases with their seconds and reference replays."""
    return ", ".join(f"{name} {seconds:.0f} s" + (f" ({fitter.replays[name]} replays)" if name in fitter.replays else "")
                     for name, seconds in fitter.timing.items())


def changes_play(cases: list[Transcript], profile: variants.ResolvedProfile, rules: Rules, knob: str, secret: Any,
                 jobs: int, partial: evidence.Partial = evidence.Partial(), together: Sequence[fit.Change] = (),
                 instead: Sequence[fit.Change] = (), listed: Sequence[fit.Change] = ()) -> bool:
    """Does putting the secret value of ``knob`` back into the fitted rules change play on the
    cases? A value adopted in place of the secret one is wrong only then: with a maximum bid
    of 435, needing a marriage above 435 plays as needing one above 570. With a mutant the
    fitted rules never play as the secret ones, so this is the one test of a value there.
    ``together``: the secret values of the knobs coupled with it (its section, or the bid cap),
    put back with it when it alone changes play. A marriage needed above the maximum of 195 under a marriage
    ceiling writes the same cap as no condition and no ceiling; no condition put back alone
    lets the ceiling cap every bid, which neither set of rules does. ``instead``: the secret
    values of the knobs fit found equally consistent in its place (``FitResult.in_its_place``),
    each put back with it: a least contract of 320 to win from the barrel, listed with a match
    target above 1000 in its place, is not wrong where the secret target is 1760. ``listed``:
    those changes as fit listed them, each put back with it: the file then names the secret
    value as equally consistent beside that change. A contract with no ceiling beside a
    marriage needed above 480, listed with a marriage needed above 580 (the maximum) in its
    place, is not wrong where the secret has neither a ceiling nor a condition."""
    from variants.checks import CONSISTENCY_CHECKS

    document = profile.to_document()
    for putting_back in ([fit.Change(knob, secret)], list(together),
                         *([fit.Change(knob, secret), c] for c in [*instead, *listed])):
        if not putting_back:
            continue
        back = fit.set_knob(rules, putting_back)
        if any(check(back) is not None for check in CONSISTENCY_CHECKS):
            continue  # the secret value does not fit the other fitted values: not shown to be the same
        if identical_on_corpus(cases, {**document, "rules": rules}, {**document, "rules": back}, jobs, partial):
            return False
    return True


def _in_its_place(secret: Rules, listed: Sequence[fit.Change]) -> list[fit.Change]:
    """The secret values of the knobs fit listed as equally consistent in a knob's place."""
    return [fit.Change(c.knob, _value(secret, c.knob)) for c in listed]


def _coupled_values(secret: Rules, knob: str) -> list[fit.Change]:
    """The secret values of the bid cap's knobs (``COUPLED``) when ``knob`` is one of them,
    else those of every knob of its section: a section is one rule, and two of its knobs can
    write the same play two ways. No dump at all plays as a dump at 455 on a corpus where no
    score lands on 455; the dump switched off counts as wrong only if the secret's whole dump
    rule put back changes play too."""
    if knob in COUPLED:
        return [fit.Change(k, _value(secret, k)) for k in COUPLED]
    section = knob.partition(".")[0]
    return [fit.Change(f"{section}.{k}", v) for k, v in secret[section].items()]


def about_the_mistake(mutant: str, knob: str) -> bool:
    """Is the knob one the mutant's mistake is about (one it names, or of a section it names)?"""
    from mutants.catalogue import CATALOGUE
    from mutants.matrix import names_a_broken_knob

    return names_a_broken_knob([knob], CATALOGUE[mutant].knobs)


def expresses(fitter: fit.Fitter, rules: Rules, knob: str, secret: Any, jobs: int) -> bool:
    """Does the fitted value of ``knob`` reproduce observations of the mutant that the secret
    value does not? With the secret value put back the reference misses some of them. A
    trick won by the highest card of the suit led, trumped or not, asks followers to beat
    that card after a trump and never to overtrump: ``play.beat_after_trump: true`` and
    ``play.must_overtrump: false`` write those legal sets down, and the trick's winner is
    left as the residual."""
    back = fit.set_knob(rules, [fit.Change(knob, secret)])
    if not fitter.consistent(back):
        return False
    ids = [case.id for case in fitter.cases]
    with _reference_for(fitter, jobs):
        # weighed as fit weighs two rule sets: each case as far as both replays reach. Some
        # observation the secret value misses is reproduced: with a marriage counted from the
        # talon, no marriage condition reproduces the bids above 245 offered to such hands (28
        # observations in cases that match), the table's 245 the 45 refused to hands with none
        # (seed 7, v28: fit keeps no condition, as it breaks matching cases for less than twice
        # what it fixes)
        with_secret, fitted = fitter.weigh(back, ids), fitter.weigh(rules, ids)
        return any(a - b for a, b in (evidence.compared(with_secret[c], fitted[c]) for c in ids))


def untold(fitter: fit.Fitter, rules: Rules, knob: str, secret: Any, jobs: int,
           instead: Sequence[fit.Change] = (), listed: Sequence[fit.Change] = ()) -> bool:
    """Is a wrong value one the implementation's observations cannot tell from the secret
    one? With the secret value put back (alone, or with a change fit listed in its place, or
    that change's secret value) the reference misses the very observations the fitted rules
    miss, in every case: the cases where the two play apart are those a mutant's mistake
    already sets apart (seed 39, v7: no win by a jump over the barrel, listed with a match
    won on the target exactly in its place, which the secret has; the one case that plays
    them apart has its tricks won by the wrong player). Counted apart, never instead of wrong."""
    ids = [case.id for case in fitter.cases]
    with _reference_for(fitter, jobs):
        fitted = fitter.weigh(rules, ids)
        for putting_back in ([fit.Change(knob, secret)], *([fit.Change(knob, secret), c] for c in [*instead, *listed])):
            back = fit.set_knob(rules, putting_back)
            if not fitter.consistent(back):
                continue
            with_secret = fitter.weigh(back, ids)
            if all(with_secret[c].missed == fitted[c].missed for c in ids):
                return True
    return False


@contextlib.contextmanager
def _reference_for(fitter: fit.Fitter, jobs: int) -> Iterator[None]:
    """The fitter's reference pool opened again for more replays (the fit closed its own)."""
    fitter.reference = observe.Pool(REFERENCE_COMMAND, jobs, batch=True)
    try:
        yield
    finally:
        fitter.reference.close()


def only_with(cases: list[Transcript], profile: variants.ResolvedProfile, rules: Rules, knob: str,
              secret: Rules, expressing: Sequence[str], jobs: int, partial: evidence.Partial) -> bool:
    """Does the fitted value of ``knob`` change play only on top of the values that express the
    mutant? With their secret values put back, its secret value plays as the fitted one: the
    value only refines how they express it. An uncapped barrel arrival expresses a barrel that
    does not cap arrivals, but it leaves a score of 980 on the barrel where an occupant's is
    still capped; a match target of 905 caps it again (``_capped`` keeps an uncapped score only
    below the target), and with the cap put back the target plays as 1000 on the corpus."""
    base = fit.set_knob(rules, [fit.Change(k, _value(secret, k)) for k in expressing])
    return not changes_play(cases, profile, base, knob, _value(secret, knob), jobs, partial, _coupled_values(secret, knob))


def mistake_named(mutant: str, causes: list[RootCause], wrong: list[str], expressing: list[str],
                  identical: bool) -> str:
    """Whether fit named the mutant's mistake.

    With a residual, each of its causes must name the mistake. Without one, either the corpus
    does not show the mutant (the fitted rules play as the secret ones) or knob values
    express it on the corpus (a mutant letting the opener pass is ``auction.opener_may_pass``
    but for the all-pass ending): then every value that changes play must be one that
    expresses the mistake (``expresses``, of a knob it is about), as ``catalogue``'s
    ``own knob``."""
    from mutants.catalogue import CATALOGUE
    from mutants.matrix import names_the_mistake

    if causes:
        broken = CATALOGUE[mutant].knobs
        return "yes" if all(names_the_mistake(c.signature, list(c.knobs), broken) for c in causes) else "NO"
    if identical:
        return "unseen"
    return "yes (a knob value expresses it)" if wrong and set(wrong) <= set(expressing) else "NO"


def _value(rules: Rules, knob: str) -> Any:
    section, _, key = knob.partition(".")
    return rules[section][key]


def _realistic_totals(rows: list[tuple[Any, ...]]) -> None:
    if not rows:
        return
    free = [r for r in rows if r[1] != "mutant"]
    with_mutant = [r for r in rows if r[1] == "mutant"]
    changed = sum(r[2] for r in rows)
    print(f"\n{len(rows)} variants, {changed} secret knob values: recovered {sum(r[3] for r in rows)} exactly and "
          f"{sum(r[4] for r in rows)} equivalently on the corpus; wrong values adopted that change play: "
          f"{sum(len(r[5]) for r in rows)} (in {sum(1 for r in rows if r[5])} variants; of them the implementation's "
          f"observations cannot tell {sum(len(r[13]) for r in rows)} from the secret value, and no question asking found "
          f"tells {sum(len(r[15]) for r in rows)} apart); secret values left at the "
          f"profile's that change play: {sum(len(r[12]) for r in rows)} (in {sum(1 for r in rows if r[12])} variants; "
          f"of them the observations cannot tell {sum(len(r[14]) for r in rows)} from the profile's value); "
          f"values expressing a mutant's mistake on the corpus: {sum(len(r[11]) for r in rows)}")
    print(f"identical on the profile's cases: {sum(1 for r in free if r[6])} of {len(free)} variants without a mutant "
          f"({sum(1 for r in free if r[6]) / max(1, len(free)):.0%})")
    if with_mutant:
        named = sum(1 for r in with_mutant if r[7].startswith("yes"))
        by_knob = sum(1 for r in with_mutant if r[7].startswith("yes ("))
        unseen = sum(1 for r in with_mutant if r[7] == "unseen")
        print(f"residual names exactly the mutant's mistake: {named} of {len(with_mutant)} variants with a mutant "
              f"({named / len(with_mutant):.0%}; {by_knob} of them expressed on the corpus by a knob of the mistake, "
              f"found by fit); {unseen} mutant(s) no case of the profile shows")
    seconds = sorted(r[8] for r in rows)
    ratios = sorted(r[9] for r in rows)
    print(f"median fit {seconds[len(seconds) // 2]:.0f} s, median ratio to verify {ratios[len(ratios) // 2]:.1f}x "
          f"(worst {ratios[-1]:.1f}x)")


DEVELOPMENT_SEEDS = Path(__file__).with_name("development-seeds.txt")


def development_seeds() -> set[int]:
    lines = DEVELOPMENT_SEEDS.read_text(encoding="utf-8").splitlines()
    return {int(line) for line in lines if line.strip() and not line.startswith("#")}


def chosen_seed(seed: int | None, developing: bool) -> int:
    """The seed of this run, said first: a fresh one from the clock unless given. A benchmark
    one tunes on is no measure, so a seed on the development list is flagged as such."""
    if seed is None:
        seed = time.time_ns() % 1_000_000_007
        while seed in development_seeds():
            seed += 1
    if developing and seed not in development_seeds():
        with DEVELOPMENT_SEEDS.open("a", encoding="utf-8") as listed:
            listed.write(f"{seed}\n")
    flag = " (on the development list: a tuning seed, not a measure)" if seed in development_seeds() else " (fresh)"
    print(f"seed {seed}{flag}", flush=True)
    return seed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("mode", choices=("variants", "realistic", "mutants", "catalogue", "timing"))
    parser.add_argument("--matrix", help="catalogue: a kill matrix JSON (python -m mutants --json FILE)")
    parser.add_argument("names", nargs="*")
    parser.add_argument("--count", type=int, default=30)
    parser.add_argument("--no-ask", action="store_true",
                        help="realistic: score the search alone (thousand fit --no-ask), not its questions too")
    parser.add_argument("--seed", type=int, default=None,
                        help="the draw's seed (default: a fresh one from the clock, printed); a seed on "
                             "benchmarks/development-seeds.txt is a tuning seed, not a measure")
    parser.add_argument("--developing", action="store_true",
                        help="add this run's seed to benchmarks/development-seeds.txt (you are tuning on it)")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--profile", default="polish")
    parser.add_argument("--skip", type=int, default=0, help="draw but do not fit the first N variants")
    parser.add_argument("--only", type=int, metavar="INDEX",
                        help="variants, realistic: fit only the variant of this index (the same draw as in a full run)")
    args = parser.parse_intermixed_args()
    args.seed = chosen_seed(args.seed, args.developing)
    if args.only is not None:
        args.skip, args.count = args.only, args.only + 1
    if args.mode == "catalogue" and not args.matrix:
        parser.error("catalogue needs --matrix FILE (python -m mutants --json FILE)")
    {"variants": run_variants, "realistic": run_realistic, "mutants": run_mutants, "catalogue": run_catalogue, "timing": run_timing}[args.mode](args)


if __name__ == "__main__":
    main()
