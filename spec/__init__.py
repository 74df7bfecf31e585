"""The project's rule data: JSON Schemas and variant profiles. Data only."""

from pathlib import Path

SPEC_DIR = Path(__file__).resolve().parent
SCHEMA_DIR = SPEC_DIR / "schema"
PROFILES_DIR = SPEC_DIR / "profiles"
PROTOCOL_SCHEMA_DIR = SCHEMA_DIR / "protocol"
