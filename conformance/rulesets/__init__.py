"""Rule sets side by side: ``compare`` and ``replay`` (what differing rules do to the same deal)
and ``coverage`` (which knob values the corpus exercises).

May import: ``spec``, ``variants``, ``conformance.corpus``, ``conformance.harness`` and
``conformance.terminal``; never ``conformance.oracle`` or ``conformance.cli``.
"""
