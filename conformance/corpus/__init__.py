"""The corpus: reading, checking and caching the transcripts, and the protocol's schemas.

The bottom room of ``conformance``: ``transcripts`` loads and validates the deal transcripts
(``conformance/cases/``, ``conformance/generated/``), ``cache`` keeps checked transcripts keyed
by their content, ``schemas`` builds the validators of the transcript and protocol schemas.

May import: ``spec``, ``variants`` and ``conformance.terminal``; nothing else of ``conformance``.
"""
