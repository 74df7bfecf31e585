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

A cache cannot lie: its digest is an HMAC-SHA256 under a key kept in the folder (``key``,
readable by the user only), so an entry changed by hand (legal sets dropped, ``deals: []``)
with its SHA-256 recomputed does not match and the files are checked again. A cache folder,
file or key not owned by the user, or writable (the key: readable) by others, is ignored with
one warning on stderr, and never written.

Folder: ``$THOUSAND_CACHE_DIR``, else ``$XDG_CACHE_HOME/thousand``, else
``~/.cache/thousand``. ``THOUSAND_NO_CACHE`` (any non-empty value) turns the cache off.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import stat
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

from spec import SCHEMA_DIR
from variants import loader
from variants.loader import YamlError, read_bytes

FORMAT = 2  # 2: the digest is an HMAC under the folder's key
FILE_NAME = "transcripts.json"
KEY_NAME = "key"
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
    """A stored entry still has the transcript schema's required structure (guards a cache
    edited by hand, even one signed again with the user's own key): at least one deal, each
    with its dealer, three hands, a talon of three and its steps, each step an action. Written
    out: validating every entry against the schema would cost three times the cached load."""
    return (isinstance(data, dict) and isinstance(data.get("id"), str) and isinstance(data.get("title"), str)
            and isinstance(data.get("deals"), list) and bool(data["deals"]) and all(_deal_ok(deal) for deal in data["deals"])
            and all(isinstance(data.get(name), list) and all(isinstance(item, str) for item in data[name])
                    for name in ("profiles", "knobs"))
            and isinstance(data.get("match"), (dict, type(None))))


def _deal_ok(deal: Any) -> bool:
    return (isinstance(deal, dict) and type(deal.get("dealer")) is int  # noqa: E721 - true is not a dealer
            and isinstance(deal.get("hands"), list) and len(deal["hands"]) == 3
            and all(isinstance(hand, list) for hand in deal["hands"])
            and isinstance(deal.get("talon"), list) and len(deal["talon"]) == 3
            and isinstance(deal.get("steps"), list)
            and all(isinstance(step, dict) and isinstance(step.get("action"), str) and step["action"]
                    for step in deal["steps"]))


# --- who may have written the cache --------------------------------------------------------

_warned: set[str] = set()


def _warn(problem: str) -> None:
    if problem not in _warned:
        _warned.add(problem)
        print(f"thousand: the transcript cache is ignored: {problem}", file=sys.stderr)


def _unsafe(path: Path, secret: bool = False) -> str | None:
    """Why ``path`` (when it exists) cannot be trusted: another owner, or writable (for a
    secret: readable or writable) by the group or others; None when it is safe or absent."""
    try:
        status = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"{path}: {exc.strerror or exc}"
    if hasattr(os, "getuid") and status.st_uid != os.getuid():
        return f"{path} is not owned by you"
    if stat.S_ISLNK(status.st_mode):
        return f"{path} is a symbolic link"
    if status.st_mode & (0o077 if secret else 0o022):
        return f"{path} is {'readable or writable' if secret else 'writable'} by others (mode {stat.S_IMODE(status.st_mode):o})"
    return None


def _folder_problem(folder: Path) -> str | None:
    return _unsafe(folder) or _unsafe(folder / FILE_NAME) or _unsafe(folder / KEY_NAME, secret=True)


def _key(folder: Path, create: bool) -> bytes | None:
    """The folder's secret key (made, readable by the user only, when ``create``), or None."""
    path = folder / KEY_NAME
    try:
        with open(path, "rb") as reader:
            key = reader.read(64)
        return key if len(key) >= 32 else None
    except FileNotFoundError:
        if not create:
            return None
    except OSError:
        return None
    try:
        key = secrets.token_bytes(32)
        made = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
        with os.fdopen(made, "wb") as stream:
            stream.write(key)
        return key
    except OSError:  # another run made it meanwhile: use theirs
        return _key(folder, create=False)


def _digest(key: bytes, salt: str, body: str) -> str:
    return hmac.new(key, f"{FORMAT} {salt}\n{body}".encode("utf-8", "surrogatepass"), hashlib.sha256).hexdigest()


class Store:
    """The entries read from the cache file, and those used or added by this run."""

    def __init__(self, file: Path, salt: str, entries: dict[str, Any], writable: bool = True) -> None:
        self.file = file
        self.salt = salt
        self.writable = writable  # False: a folder that failed the ownership checks
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
        if not self.changed or not self.writable:
            return
        kept = dict(self.used)
        for key, data in self.entries.items():
            if len(kept) >= MAX_ENTRIES:
                break
            kept.setdefault(key, data)
        body = json.dumps(kept, separators=(",", ":"), ensure_ascii=False)
        try:
            self.file.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            if _folder_problem(self.file.parent):  # made by another user meanwhile
                return
            secret = _key(self.file.parent, create=True)
            if secret is None:
                return
            header = json.dumps({"format": FORMAT, "salt": self.salt, "digest": _digest(secret, self.salt, body)})
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


# file -> (its identity when read, salt, entries): a run that loads the corpus many times (fit
# asks dozens of questions, each proven by a verify) reads, hashes and parses the five
# megabytes of the file once while it stays the same file
_read: dict[Path, tuple[tuple[int, ...], str, dict[str, Any]]] = {}


def _identity(file: Path) -> tuple[int, ...] | None:
    """What changes when the file is written again (a save renames a new file over it)."""
    try:
        status = os.stat(file)
    except OSError:
        return None
    return status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns


def _read_entries(file: Path, salt: str) -> dict[str, Any]:
    """The file's entries (a copy: a store adds to its own), read again only when the file changed."""
    identity = _identity(file)
    memo = _read.get(file)
    if identity is not None and memo is not None and memo[:2] == (identity, salt):
        return dict(memo[2])
    entries = _checked_entries(file, salt)
    if identity is not None and identity == _identity(file):
        _read[file] = identity, salt, entries
    return dict(entries)


def _checked_entries(file: Path, salt: str) -> dict[str, Any]:
    secret = _key(file.parent, create=False)
    if secret is None or not file.exists():
        return {}
    try:
        text = read_bytes(file, str(file), MAX_FILE_BYTES).decode("utf-8")
        header_text, _, body = text.partition("\n")
        header = json.loads(header_text)
        if (not isinstance(header, dict) or header.get("format") != FORMAT or header.get("salt") != salt
                or not isinstance(header.get("digest"), str)
                or not hmac.compare_digest(header["digest"], _digest(secret, salt, body))):
            return {}
        entries = json.loads(body)
    except (YamlError, ValueError, RecursionError, OSError):
        return {}
    return entries if isinstance(entries, dict) else {}


def open_store() -> Store | None:
    """The cache, or None when THOUSAND_NO_CACHE turns it off."""
    if os.environ.get("THOUSAND_NO_CACHE"):
        return None
    salt = _salt()
    folder = cache_folder()
    file = folder / FILE_NAME
    problem = _folder_problem(folder)
    if problem:
        _warn(problem)
        return Store(file, salt, {}, writable=False)
    return Store(file, salt, _read_entries(file, salt))
