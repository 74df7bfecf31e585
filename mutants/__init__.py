"""Deliberately wrong implementations of the rules, for measuring the conformance corpus.

``mutants.catalogue`` names each mistake; ``python -m mutants.serve NAME`` serves the
reference engine with that mistake over protocol v1; ``python -m mutants`` runs the
corpus against every mutant and prints the kill matrix.
"""
