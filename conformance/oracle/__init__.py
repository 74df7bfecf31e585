"""Oracle mode: the reference is the yardstick, played under given rules beside an implementation.

``observe`` records what an implementation and the reference do on the same actions and
compares them; ``house`` is ``verify --rules``; ``fit`` searches the knob values an
implementation plays; ``fuzz`` plays random and ``positions``-built deals against it;
``knobs`` computes which knobs decide a case; ``generate`` writes the generated transcripts.

May import: ``spec``, ``variants``, ``conformance.corpus``, ``conformance.harness`` and
``conformance.terminal``; never ``conformance.rulesets`` or ``conformance.cli``.
"""
