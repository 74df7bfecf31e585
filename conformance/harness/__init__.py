"""The harness: runs any implementation over protocol v1 and judges it against the corpus.

``process`` starts and talks to an implementation (deadlines, clipping, the kill of its
process group), ``runner`` checks each case step by step, ``diagnosis`` turns failed checks
into root causes through ``spec/diagnosis.yaml``, ``reports`` writes JSON, JUnit and text.

May import: ``spec``, ``variants``, ``conformance.corpus`` and ``conformance.terminal``.
"""
