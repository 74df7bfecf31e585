"""The conformance suite: transcripts, the runner and the `thousand` command line."""
