"""An implementation under test, run as a subprocess speaking protocol v1 (JSON lines).

Nothing here can hang: every reply is awaited with a deadline (a reader thread feeds a
queue), stderr is drained continuously into a bounded ring buffer, and the process runs in
its own process group so that killing it also kills anything it started.
"""

from __future__ import annotations

import collections
import json
import os
import selectors
import signal
import subprocess
import threading
import time
from typing import IO, Any, Callable, Sequence

MAX_LINE = 8 * 1024 * 1024  # a reply longer than this is an error, not a memory leak
STDERR_KEEP = 64 * 1024  # bytes of stderr kept for reports


class ProtocolFailure(Exception):
    """The implementation did not answer properly: crash, bad JSON, wrong seq, invalid reply."""

    outcome = "error"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.details: dict[str, Any] = {}  # where in the case it happened (set by the runner)


class Timeout(ProtocolFailure):
    """No complete reply within the deadline."""

    outcome = "timeout"


class Preencoded:
    """A request field serialized once and reused (the profile document of every ``match``)."""

    def __init__(self, value: Any) -> None:
        self.value = value
        self.text = json.dumps(value, separators=(",", ":"))


def encode_request(message: dict[str, Any]) -> bytes:
    """One JSON line; Preencoded fields are spliced in as they are."""
    plain = {key: value for key, value in message.items() if not isinstance(value, Preencoded)}
    text = json.dumps(plain, separators=(",", ":"))
    extra = "".join(f",{json.dumps(key)}:{value.text}" for key, value in message.items() if isinstance(value, Preencoded))
    return (text[:-1] + extra + "}\n").encode("utf-8")


def plain_message(message: dict[str, Any]) -> dict[str, Any]:
    return {key: value.value if isinstance(value, Preencoded) else value for key, value in message.items()}


class _RingBuffer:
    """The last ``limit`` bytes written, thread-safe."""

    def __init__(self, limit: int) -> None:
        self._chunks: collections.deque[bytes] = collections.deque()
        self._size = 0
        self._limit = limit
        self._lock = threading.Lock()

    def write(self, chunk: bytes) -> None:
        with self._lock:
            self._chunks.append(chunk)
            self._size += len(chunk)
            while self._size - len(self._chunks[0]) >= self._limit:
                self._size -= len(self._chunks.popleft())

    def text(self) -> str:
        with self._lock:
            data = b"".join(self._chunks)[-self._limit:]
        return data.decode("utf-8", errors="replace")


class Implementation:
    """One running implementation process.

    ``request`` sends a command and returns the reply whose ``seq`` echoes it; any problem
    raises ProtocolFailure (or Timeout), after which the process must be ``kill``-ed.
    ``on_message(direction, message)`` sees every message (for --validate-messages).
    """

    def __init__(self, command: Sequence[str], timeout: float,
                 on_message: Callable[[str, str, dict[str, Any]], None] | None = None,
                 env: dict[str, str] | None = None) -> None:
        self.command = list(command)
        self.timeout = timeout
        self.on_message = on_message
        self.stderr = _RingBuffer(STDERR_KEEP)
        self._buffer = bytearray()
        self._closed = False
        self._seq = 0
        try:
            self.process = subprocess.Popen(
                self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                start_new_session=True, env=env)
        except OSError as exc:
            raise ProtocolFailure(f"cannot start {self.command[0]!r}: {exc.strerror or exc}") from None
        assert self.process.stdout and self.process.stderr
        # Replies are read in the calling thread (select with a deadline, then os.read): a
        # reader thread would cost a thread switch per reply. stderr has its own thread, so
        # that a flood never fills the pipe and blocks the implementation.
        self._fd = self.process.stdout.fileno()
        self._selector = selectors.DefaultSelector()
        self._selector.register(self._fd, selectors.EVENT_READ)
        threading.Thread(target=self._drain_stderr, args=(self.process.stderr,), daemon=True).start()

    # --- background readers ---

    def _drain_stderr(self, stream: IO[bytes]) -> None:
        try:
            while True:
                chunk = stream.read1(65536)  # type: ignore[attr-defined]
                if not chunk:
                    break
                self.stderr.write(chunk)
        except (OSError, ValueError):
            pass

    # --- requests ---

    def request(self, command: str, **fields: Any) -> dict[str, Any]:
        """Send ``{"cmd": command, "seq": n, **fields}``; return the reply echoing ``n``."""
        self._seq += 1
        message = {"cmd": command, "seq": self._seq, **fields}
        if self.on_message:
            self.on_message("command", command, plain_message(message))
        self._send(message)
        reply = self._receive(command)
        if self.on_message:
            self.on_message("reply", command, reply)
        if reply.get("seq") != self._seq:
            raise ProtocolFailure(f"reply to {command!r} has seq {reply.get('seq')!r}; expected {self._seq}")
        return reply

    def _send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin
        data = encode_request(message)
        try:
            self.process.stdin.write(data)
            self.process.stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            raise ProtocolFailure(f"cannot send {message['cmd']!r}: the implementation closed its input"
                                  f"{self._exit_note()}") from None

    def _read_line(self, command: str) -> bytes:
        """The next complete line of output, waiting at most ``timeout`` seconds."""
        deadline = time.monotonic() + self.timeout
        while True:
            end = self._buffer.find(b"\n")
            if end >= 0:
                line = bytes(self._buffer[: end + 1])
                del self._buffer[: end + 1]
                return line
            if len(self._buffer) > MAX_LINE:
                raise ProtocolFailure(f"reply to {command!r} is longer than {MAX_LINE} bytes")
            if self._closed:
                if self._buffer:
                    raise ProtocolFailure(f"reply to {command!r} ends without a newline{self._exit_note(wait=0.5)}")
                raise ProtocolFailure(f"the implementation closed its output before replying to {command!r}"
                                      f"{self._exit_note(wait=0.5)}")
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not self._selector.select(remaining):
                raise Timeout(f"no reply to {command!r} within {self.timeout:g} s")
            try:
                chunk = os.read(self._fd, 1 << 16)
            except OSError:
                chunk = b""
            if chunk:
                self._buffer += chunk
            else:
                self._closed = True

    def _receive(self, command: str) -> dict[str, Any]:
        item = self._read_line(command)
        try:
            reply = json.loads(item)
        except (ValueError, UnicodeDecodeError):
            raise ProtocolFailure(f"reply to {command!r} is not JSON: {_clip(item)}") from None
        if not isinstance(reply, dict):
            raise ProtocolFailure(f"reply to {command!r} is not a JSON object: {_clip(item)}")
        return reply

    def _exit_note(self, wait: float = 0.0) -> str:
        try:
            code = self.process.wait(timeout=wait) if wait else self.process.poll()
        except subprocess.TimeoutExpired:
            code = None
        return "" if code is None else f" (it exited with code {code})"

    # --- ending ---

    def stop(self) -> None:
        """Ask politely (``stop``), then kill whatever is left."""
        try:
            if self.process.poll() is None:
                saved, self.timeout = self.timeout, min(self.timeout, 2.0)
                self.request("stop")
                self.timeout = saved
                self.process.wait(timeout=2.0)
        except (ProtocolFailure, subprocess.TimeoutExpired):
            pass
        self.kill()

    def kill(self) -> None:
        """Kill the whole process group and reap the process; never blocks for long."""
        if self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        else:
            try:  # children it left behind in its group
                os.killpg(self.process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        try:
            self.process.wait(timeout=5.0)
        except subprocess.TimeoutExpired:
            pass
        # stdout and stderr stay open until this object goes: another thread may be reading
        # them right now (an interruption kills from the main thread), and closing an fd
        # under a reader could hand its number to another file.
        try:
            if self.process.stdin:
                self.process.stdin.close()
        except OSError:
            pass

    def stderr_tail(self, lines: int = 20) -> str:
        """The last lines the implementation wrote on stderr."""
        return "\n".join(self.stderr.text().splitlines()[-lines:])


def _clip(data: bytes, limit: int = 200) -> str:
    text = data.decode("utf-8", errors="replace").rstrip("\n")
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} characters)"
