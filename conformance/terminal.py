"""What the commands show on the terminal besides their output: one progress line on stderr,
and a quiet stdout once its reader has gone. Nothing of the project is imported here, so every
room of ``conformance`` may use it."""

from __future__ import annotations

import os
import sys
from typing import Callable


def silence_stdout() -> None:
    """The reader went away: point stdout at /dev/null so the interpreter's final flush of
    what is still buffered does not raise a second BrokenPipeError at exit."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


def terminal_progress(tool: str) -> Callable[[str], None]:
    """One updating line on stderr when it is a terminal; nothing otherwise (see ``clear_progress``)."""
    if not sys.stderr.isatty():
        return lambda text: None

    def show(text: str) -> None:
        sys.stderr.write(f"\r\033[K{tool}: {text[:150]}")
        sys.stderr.flush()

    return show


def clear_progress() -> None:
    """Erase the progress line, if there is one, before the output proper."""
    if sys.stderr.isatty():
        sys.stderr.write("\r\033[K")
        sys.stderr.flush()
