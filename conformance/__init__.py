"""The conformance suite: the corpus, the harness that judges any implementation, oracle mode,
rule-set comparison and the `thousand` command line.

Rooms, each importing only the ones below it (``tests/project/test_architecture.py`` holds it):

    cli        the `thousand` dispatcher and the verify and report commands
    oracle     observe, house (verify --rules), fit, fuzz, positions, knobs, generate
    rulesets   compare, replay, coverage (beside oracle: neither imports the other)
    harness    process, runner, diagnosis, reports
    corpus     transcripts, their cache, the protocol and transcript schemas
    terminal   the progress line and a quiet stdout (imports nothing of the project)
"""
