"""What the commands show on the terminal besides their output: one progress line on stderr,
and a quiet stdout once its reader has gone. Nothing of the project is imported here, so every
room of ``conformance`` may use it."""

from __future__ import annotations

import os
import sys
import time
from typing import Callable, TextIO


def silence_stdout() -> None:
    """The reader went away: point stdout at /dev/null so the interpreter's final flush of
    what is still buffered does not raise a second BrokenPipeError at exit."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


def terminal_progress(tool: str, every: float | None = None) -> Callable[[str], None]:
    """One updating line on stderr when it is a terminal (see ``clear_progress``). Otherwise
    nothing, or with ``every``, a plain line at most once in that many seconds, the first
    after that long: a run of minutes written to a log is not silent all along, and a short
    one writes nothing but its output."""
    if not sys.stderr.isatty():
        if every is None:
            return lambda text: None
        last = [time.monotonic()]

        def note(text: str) -> None:
            now = time.monotonic()
            if now - last[0] >= every:
                last[0] = now
                sys.stderr.write(f"{tool}: {printable(text[:150])}\n")
                sys.stderr.flush()

        return note

    def show(text: str) -> None:
        sys.stderr.write(f"\r\033[K{tool}: {text[:150]}")
        sys.stderr.flush()

    return show


def clear_progress() -> None:
    """Erase the progress line, if there is one, before the output proper."""
    if sys.stderr.isatty():
        sys.stderr.write("\r\033[K")
        sys.stderr.flush()


# Control characters (C0 but tab and newline, DEL, C1) and the bidirectional overrides: what an
# implementation's message or stderr could use to rewrite the terminal (a title, a cleared
# screen, text hidden or reordered) is shown as an escape instead.
_CONTROLS = {code: f"\\x{code:02x}" for code in (*range(0x00, 0x09), *range(0x0b, 0x20), *range(0x7f, 0xa0))}
_CONTROLS.update({code: f"\\u{code:04x}" for code in (*range(0x202a, 0x202f), *range(0x2066, 0x206a))})


def printable(text: str) -> str:
    """``text`` with every control character but tab and newline shown as an escape."""
    return text.translate(_CONTROLS)


class Escaped:
    """A text stream that escapes control characters in everything written to it."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        return self._stream.write(printable(text))

    def flush(self) -> None:
        self._stream.flush()

    def __getattr__(self, name: str) -> object:  # fileno, isatty, encoding...: the stream's own
        return getattr(self._stream, name)
