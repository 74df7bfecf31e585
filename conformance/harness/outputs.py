"""Every file a command writes for its user (``--output``, ``--report``, ``--junit``, ``--save``,
``--save-case``, ``--write-expected-failures``) goes through here.

A path is checked before the run (a run of minutes must not end in "cannot write"), then
written whole or not at all: into a temporary file of the same folder, renamed over the path.
The rename replaces a symbolic link at the path instead of writing through it (a link
planted where a report goes cannot redirect it onto another file), keeps the mode of the file
it replaces (a shared 0644 report stays readable), and a failure removes the temporary file
and names the path.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path


class OutputError(OSError):
    """A file could not be written; the message names it and says why."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"cannot write {path}: {reason}")
        self.path = path

    def __str__(self) -> str:
        return str(self.args[0])


def output_problem(path: Path) -> str | None:
    """Why ``path`` could not be written (said before the run), or None."""
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        return f"{path}: the folder {folder} does not exist (create it first)"
    try:
        found = os.lstat(path)
    except FileNotFoundError:
        found = None
    except OSError as exc:
        return f"{path}: {exc.strerror or exc}"
    if found is not None and stat.S_ISDIR(found.st_mode):
        return f"{path}: is a folder, not a file"
    if found is not None and not (stat.S_ISREG(found.st_mode) or stat.S_ISLNK(found.st_mode)):
        return f"{path}: is not a regular file (a device or a pipe is never written)"
    if not os.access(folder, os.W_OK | os.X_OK):
        return f"{path}: the folder {folder} is not writable"
    return None


def _mode_for(path: Path) -> int:
    """The mode the written file gets: that of the regular file it replaces, else what a new
    file gets under the umask (a temporary file alone would be 0600)."""
    try:
        found = os.lstat(path)
        if stat.S_ISREG(found.st_mode):
            return stat.S_IMODE(found.st_mode)
    except OSError:
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


def write_atomically(path: Path, data: str | bytes, exclusive: bool = False) -> None:
    """Write ``data`` (text as UTF-8) to ``path`` whole or not at all; with ``exclusive``, an
    existing path (a dangling link included) is left alone and is an error. OutputError
    naming the path when it cannot be written."""
    content = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    folder = path.parent if str(path.parent) else Path(".")
    try:
        handle, temporary = tempfile.mkstemp(dir=folder, prefix=f".{path.name[:100]}.", suffix=".tmp")
    except OSError as exc:
        raise OutputError(path, exc.strerror or str(exc)) from None
    try:
        with os.fdopen(handle, "wb") as stream:
            os.fchmod(stream.fileno(), _mode_for(path))
            stream.write(content)
            stream.flush()
            os.fsync(stream.fileno())
        if exclusive:
            os.link(temporary, path)  # fails on any existing name, a link included; never follows it
            os.unlink(temporary)
        else:
            os.replace(temporary, path)
    except FileExistsError:
        _remove(temporary)
        raise OutputError(path, "it exists; not overwritten") from None
    except OSError as exc:
        _remove(temporary)
        raise OutputError(path, exc.strerror or str(exc)) from None
    except BaseException:
        _remove(temporary)
        raise


def _remove(temporary: str) -> None:
    try:
        os.unlink(temporary)
    except OSError:
        pass
