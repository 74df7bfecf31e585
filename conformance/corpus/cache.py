"""A cache of checked transcripts keyed by file content, so that a run does not parse and
schema-validate the whole corpus again (a one-case ``thousand verify`` starts in well under
a second; the kill matrix pays the full price once instead of once per mutant).

The cache is one file, ``transcripts.json`` in the cache folder: a header line
``{"format", "salt", "digest"}`` and then the entries, ``{content key: transcript data}``.
The content key is the SHA-256 of the file's bytes. The salt covers what decides whether a
file is a valid transcript (the JSON schemas under spec/schema, the source of the modules
that read and check transcripts, the YAML library), so any change to them voids the whole
cache. The id check (id equals the path) is not cached: it depends on where the file is.

Only transcripts that passed every check are stored. The file is written atomically (a
temporary file in the same folder, then a rename); a cache that cannot be read, is cut
short, has another salt or whose digest does not match is ignored and rebuilt. A cache that
cannot be written is simply not written: it only saves time.

Folder: ``$THOUSAND_CACHE_DIR``, else ``$XDG_CACHE_HOME/thousand``, else
``~/.cache/thousand``. ``THOUSAND_NO_CACHE`` (any non-empty value) turns the cache off.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

import yaml

from spec import SCHEMA_DIR
from variants import loader
from variants.loader import YamlError, read_bytes

FORMAT = 1
FILE_NAME = "transcripts.json"
MAX_ENTRIES = 5000  # about five corpora: old entries beyond this are dropped at the next save
MAX_FILE_BYTES = 256 * 1024 * 1024
_CHECKING_MODULES = ("conformance/corpus/transcripts.py", "conformance/corpus/cache.py")


def cache_folder() -> Path:
    """Where the cache lives (see the module's description)."""
    if os.environ.get("THOUSAND_CACHE_DIR"):
        return Path(os.environ["THOUSAND_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "thousand"


def _salt() -> str:
    digest = hashlib.sha256(f"{FORMAT} {yaml.__version__} {loader._Parser.__name__}".encode())
    package_root = Path(__file__).resolve().parents[2]
    sources = [package_root / name for name in _CHECKING_MODULES] + [Path(loader.__file__)]
    for path in sorted(SCHEMA_DIR.rglob("*.json")) + sources:
        digest.update(path.name.encode() + b"\0")
        try:
            digest.update(path.read_bytes())
        except OSError:
            digest.update(b"unreadable")
    return digest.hexdigest()


def _shape_ok(data: Any) -> bool:
    """A stored entry still looks like checked transcript data (guards a hand-edited cache)."""
    return (isinstance(data, dict) and isinstance(data.get("id"), str) and isinstance(data.get("title"), str)
            and isinstance(data.get("deals"), list) and all(isinstance(deal, dict) for deal in data["deals"])
            and all(isinstance(data.get(name), list) and all(isinstance(item, str) for item in data[name])
                    for name in ("profiles", "knobs"))
            and isinstance(data.get("match"), (dict, type(None))))


class Store:
    """The entries read from the cache file, and those used or added by this run."""

    def __init__(self, file: Path, salt: str, entries: dict[str, Any]) -> None:
        self.file = file
        self.salt = salt
        self.entries = entries
        self.used: dict[str, Any] = {}
        self.changed = False

    @staticmethod
    def key(raw: bytes) -> str:
        return hashlib.sha256(raw).hexdigest()

    def get(self, key: str) -> Any:
        """The checked data stored for this content, or None."""
        data = self.entries.get(key)
        if data is None or not _shape_ok(data):
            return None
        self.used[key] = data
        return data

    def put(self, key: str, data: Any) -> None:
        self.entries[key] = data
        self.used[key] = data
        self.changed = True

    def save(self) -> None:
        """Write the cache when this run added to it: this run's entries first, then older ones."""
        if not self.changed:
            return
        kept = dict(self.used)
        for key, data in self.entries.items():
            if len(kept) >= MAX_ENTRIES:
                break
            kept.setdefault(key, data)
        body = json.dumps(kept, separators=(",", ":"), ensure_ascii=False)
        header = json.dumps({"format": FORMAT, "salt": self.salt, "digest": hashlib.sha256(body.encode()).hexdigest()})
        try:
            self.file.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            handle, temporary = tempfile.mkstemp(dir=self.file.parent, prefix=".transcripts-", suffix=".tmp")
            try:
                with os.fdopen(handle, "w", encoding="utf-8") as stream:
                    stream.write(header + "\n" + body)
                os.replace(temporary, self.file)
            except BaseException:
                os.unlink(temporary)
                raise
        except OSError:
            pass  # a cache that cannot be written only costs time
        self.changed = False


def _read_entries(file: Path, salt: str) -> dict[str, Any]:
    try:
        text = read_bytes(file, str(file), MAX_FILE_BYTES).decode("utf-8")
        header_text, _, body = text.partition("\n")
        header = json.loads(header_text)
        if (not isinstance(header, dict) or header.get("format") != FORMAT or header.get("salt") != salt
                or header.get("digest") != hashlib.sha256(body.encode()).hexdigest()):
            return {}
        entries = json.loads(body)
    except (YamlError, ValueError, RecursionError):
        return {}
    return entries if isinstance(entries, dict) else {}


def open_store() -> Store | None:
    """The cache, or None when THOUSAND_NO_CACHE turns it off."""
    if os.environ.get("THOUSAND_NO_CACHE"):
        return None
    salt = _salt()
    file = cache_folder() / FILE_NAME
    return Store(file, salt, _read_entries(file, salt))
