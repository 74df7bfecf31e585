"""The rules site generator: reads spec/ and conformance/, writes docs/. Nothing imports it."""
