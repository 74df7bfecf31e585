"""An implementation under test, run as a subprocess speaking protocol v1 (JSON lines).

Nothing here can hang: every reply is awaited with a deadline (one poll loop in the calling
thread reads replies and, meanwhile, writes what is queued of the requests, so that several
requests can be written at once without either side blocking on a full pipe), stderr is
drained continuously into a bounded ring buffer, and the process runs in its own process
group so that killing it also kills anything it started.
"""

from __future__ import annotations

import collections
import ctypes
import functools
import json
import os
import math
import re
import select
import signal
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Any, Callable, Iterator, NamedTuple, Sequence

MAX_LINE = 8 * 1024 * 1024  # a reply longer than this is an error, not a memory leak
STDERR_KEEP = 64 * 1024  # bytes of stderr kept for reports
STDERR_TAIL_BYTES = 4 * 1024  # at most this much of it shown with one failure
PR_SET_CHILD_SUBREAPER = 36  # linux/prctl.h
# A legal set or an event list longer than this is a protocol error: the largest real one is
# a few hundred (every bid up to a far maximum, every give of two cards), an engine that
# ignores its maximum may offer a few thousand (a rule mistake, to be diagnosed as one), and
# every comparison and diagnosis of a set is then bounded however large a set is sent.
MAX_LIST = 10_000
_LISTS = {"legal": "actions", "apply": "events", "deal": "events"}


def check_lists(command: str, reply: dict[str, Any]) -> None:
    """A legal set or event list over MAX_LIST is a protocol error (a reply read alone, or one
    of the replies a ``batch`` reply holds)."""
    listed = reply.get(_LISTS.get(command, ""))
    if isinstance(listed, list) and len(listed) > MAX_LIST:
        raise ProtocolFailure(f"reply to {command!r} lists {len(listed)} {_LISTS[command]}; at most {MAX_LIST} are accepted")


class ProtocolFailure(Exception):
    """The implementation did not answer properly: crash, bad JSON, wrong seq, invalid reply."""

    outcome = "error"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.details: dict[str, Any] = {}  # where in the case it happened (set by the runner)


class Timeout(ProtocolFailure):
    """No complete reply within the deadline (or a request the implementation never read)."""

    outcome = "timeout"


class CannotStart(ProtocolFailure):
    """The command cannot be executed at all (no such file, not executable)."""


class Posted(NamedTuple):  # a named tuple: several are made per step, a frozen dataclass costs more
    """A request written (or queued) whose reply is still to be read."""

    command: str
    seq: int
    end: int  # where its line ends in the stream of request bytes


class Answer(NamedTuple):
    """A reply as read: the raw line (two sides that wrote the same bytes said the same
    thing, whatever a deep comparison would find) and the decoded object."""

    line: bytes
    reply: dict[str, Any]


# built once (json.dumps with options builds one per call); UTF-8 as it is, not \u-escaped: a
# profile document with long non-ASCII rulings would otherwise grow threefold on the wire
_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)


class Preencoded:
    """A request field serialized once and reused (the profile document of every ``match``)."""

    def __init__(self, value: Any) -> None:
        self.value = value
        self.text = _ENCODER.encode(value)


def encode_request(command: str, seq: int, fields: dict[str, Any]) -> bytes:
    """One JSON line ``{"cmd", "seq", **fields}``; Preencoded fields are spliced in as they
    are, after the others. Built piece by piece: most requests are a command and a seq."""
    text = f'{{"cmd":{_quoted(command)},"seq":{seq}'
    spliced = ""
    for key, value in fields.items():
        if isinstance(value, Preencoded):
            spliced += f",{_quoted(key)}:{value.text}"
        else:
            text += f",{_quoted(key)}:{_ENCODER.encode(value)}"
    return (text + spliced + "}\n").encode("utf-8", "surrogatepass")


@functools.lru_cache(maxsize=256)
def _quoted(name: str) -> str:
    """A command or field name as a JSON string (a handful of names, each encoded once)."""
    return _ENCODER.encode(name)


def plain_message(message: dict[str, Any]) -> dict[str, Any]:
    return {key: value.value if isinstance(value, Preencoded) else value for key, value in message.items()}


class _RingBuffer:
    """The last ``limit`` bytes written, thread-safe."""

    def __init__(self, limit: int) -> None:
        self._chunks: collections.deque[bytes] = collections.deque()
        self._size = 0
        self._limit = limit
        self._lock = threading.Lock()
        self.total = 0  # bytes ever written: a mark for "written since"

    def write(self, chunk: bytes) -> None:
        with self._lock:
            self._chunks.append(chunk)
            self._size += len(chunk)
            self.total += len(chunk)
            while self._size - len(self._chunks[0]) >= self._limit:
                self._size -= len(self._chunks.popleft())

    def text(self, since: int = 0) -> str:
        """The kept bytes, only those written after the mark ``since`` (a past ``total``)."""
        with self._lock:
            data = b"".join(self._chunks)[-self._limit:]
            fresh = max(0, self.total - since)
        return data[-fresh:].decode("utf-8", errors="replace") if fresh else ""


class Implementation:
    """One running implementation process.

    ``request`` sends a command and returns the reply whose ``seq`` echoes it; any problem
    raises ProtocolFailure (or Timeout), after which the process must be ``kill``-ed.
    ``post`` and ``collect`` pipeline several requests: their lines are written at once and
    the replies read in order, each under the same deadline and checks as one ``request``.
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
        self._outgoing = bytearray()  # request bytes not yet taken by the implementation
        self._sent = 0  # bytes ever written to its input
        self._queued = 0  # bytes ever queued for it (sent + outgoing)
        self._input_closed = False
        self._watching_input = False  # stdin is in the poll set while queued bytes wait
        self.repaired_strings = 0  # strings of its replies that held a lone surrogate (replaced)
        try:
            self.process = subprocess.Popen(
                self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                start_new_session=True, env=env)
        except (OSError, ValueError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            raise CannotStart(f"cannot start {self.command[0]!r}: {reason}") from None
        _watch(self.process.pid)  # its group: start_new_session made it the leader
        assert self.process.stdin and self.process.stdout and self.process.stderr
        # Requests are written without blocking, with the same deadline as replies: an
        # implementation that never reads its input would otherwise block the runner forever.
        # While a reply is awaited the rest of a pipelined batch is written as the pipe takes
        # it, so that neither side can block the other on a full pipe.
        self._in_fd = self.process.stdin.fileno()
        os.set_blocking(self._in_fd, False)
        # Replies are read in the calling thread (poll with a deadline, then os.read): a
        # reader thread would cost a thread switch per reply. stderr has its own thread, so
        # that a flood never fills the pipe and blocks the implementation.
        self._fd = self.process.stdout.fileno()
        self._poll = select.poll()
        self._poll.register(self._fd, select.POLLIN)
        # The thread, ``stderr_mark`` and ``stderr_tail`` all take what the pipe holds, under
        # one lock: a mark or a tail then counts every byte written before it, even those the
        # thread had not read yet (else a case's lines could land in the next case's tail, or
        # miss its own).
        self._err_fd = self.process.stderr.fileno()
        os.set_blocking(self._err_fd, False)
        self._err_lock = threading.Lock()
        threading.Thread(target=self._drain_stderr, daemon=True).start()

    # --- background readers ---

    def _drain_stderr(self) -> None:
        waiting = select.poll()
        waiting.register(self._err_fd, select.POLLIN)
        try:
            while True:
                waiting.poll()
                if not self._take_stderr():
                    break
        except (OSError, ValueError):
            pass

    def _take_stderr(self) -> bool:
        """Move what the stderr pipe holds into the buffer; False once it is closed."""
        with self._err_lock:
            while True:
                try:
                    chunk = os.read(self._err_fd, 65536)
                except BlockingIOError:
                    return True
                if not chunk:
                    return False
                self.stderr.write(chunk)

    # --- requests ---

    def request(self, command: str, **fields: Any) -> dict[str, Any]:
        """Send ``{"cmd": command, "seq": n, **fields}``; return the reply echoing ``n``."""
        return self.collect(self.post([(command, fields)]))[0].reply

    def post(self, requests: Sequence[tuple[str, dict[str, Any]]]) -> list[Posted]:
        """Queue requests (command, fields), each with the next seq, and write as much of them
        as the pipe takes without waiting; ``collect`` reads their replies."""
        posted = []
        for command, fields in requests:
            self._seq += 1
            if self.on_message:
                self.on_message("command", command, plain_message({"cmd": command, "seq": self._seq, **fields}))
            line = encode_request(command, self._seq, fields)
            self._outgoing += line
            self._queued += len(line)
            posted.append(Posted(command, self._seq, self._queued))
        self._write_some()
        return posted

    def collect(self, posted: Sequence[Posted], known: Sequence[Answer] = ()) -> list[Answer]:
        """The replies to posted requests, in order: each awaited for at most ``timeout``
        seconds, checked as JSON objects echoing their request's seq. ``known`` are answers
        read elsewhere (the other side of a lockstep): a line equal to the known one at its
        place is not decoded again, its object is shared (and must not be changed)."""
        answers = []
        for index, item in enumerate(posted):
            line = self._read_line(item)
            same = index < len(known) and known[index].line == line
            reply = known[index].reply if same else self._decode(item.command, line)
            if self.on_message:
                self.on_message("reply", item.command, reply)
            seq = reply.get("seq")
            if type(seq) is not int or seq != item.seq:  # noqa: E721 - true is not 1
                raise ProtocolFailure(f"reply to {item.command!r} has seq {_clip(repr(reply.get('seq')).encode())}; "
                                      f"expected {item.seq}")
            check_lists(item.command, reply)
            answers.append(Answer(line, reply))
        return answers

    def _write_some(self) -> None:
        """Write queued request bytes until the pipe is full; never waits."""
        while self._outgoing and not self._input_closed:
            try:
                count = os.write(self._in_fd, self._outgoing)
            except BlockingIOError:
                break
            except (OSError, ValueError):
                self._input_closed = True  # reported when a reply to an unsent request is awaited
                break
            del self._outgoing[:count]
            self._sent += count
        if self._input_closed:
            self._outgoing.clear()
        if bool(self._outgoing) != self._watching_input:  # written on while replies are awaited
            self._watching_input = bool(self._outgoing)
            if self._watching_input:
                self._poll.register(self._in_fd, select.POLLOUT)
            else:
                self._poll.unregister(self._in_fd)

    def _read_line(self, item: Posted) -> bytes:
        """The next complete line of output, waiting at most ``timeout`` seconds; the queued
        requests are written meanwhile."""
        command = item.command
        deadline = None
        while True:
            end = self._buffer.find(b"\n")
            if end >= 0:
                line = bytes(self._buffer[: end + 1])
                del self._buffer[: end + 1]
                return line
            if deadline is None:  # from when this reply is waited for
                deadline = time.monotonic() + self.timeout
            if len(self._buffer) > MAX_LINE:
                raise ProtocolFailure(f"reply to {command!r} is longer than {MAX_LINE} bytes")
            if self._input_closed and self._sent < item.end:
                if self.process.poll() is not None:  # it died before reading: say so, whatever the timing
                    raise ProtocolFailure(f"the implementation closed its output before replying to {command!r}"
                                          f"{self._exit_note()}")
                raise ProtocolFailure(f"cannot send {command!r}: the implementation closed its input")
            if self._closed:
                if self._buffer:
                    raise ProtocolFailure(f"reply to {command!r} ends without a newline{self._exit_note(wait=0.5)}")
                raise ProtocolFailure(f"the implementation closed its output before replying to {command!r}"
                                      f"{self._exit_note(wait=0.5)}")
            remaining = deadline - time.monotonic()
            ready = self._poll.poll(max(0, math.ceil(remaining * 1000))) if remaining > 0 else []
            if not ready:
                if self._sent < item.end:
                    raise Timeout(f"the implementation did not read the {command!r} request within "
                                  f"{self.timeout:g} s (its input is full)")
                raise Timeout(f"no reply to {command!r} within {self.timeout:g} s")
            for fd, _ in ready:
                if fd == self._in_fd:
                    self._write_some()
                else:
                    self._read_some()

    def _read_some(self) -> None:
        try:
            chunk = os.read(self._fd, 1 << 16)
        except OSError:
            chunk = b""
        if chunk:
            self._buffer += chunk
        else:
            self._closed = True
            self._poll.unregister(self._fd)

    def _decode(self, command: str, item: bytes) -> dict[str, Any]:
        reply, repaired = decode_reply(command, item)
        self.repaired_strings += repaired
        return reply

    def _exit_note(self, wait: float = 0.0) -> str:
        try:
            code = self.process.wait(timeout=wait) if wait else self.process.poll()
        except subprocess.TimeoutExpired:
            code = None
        if code is None:
            return ""
        # why it ended is most often what it said last (a usage error, a missing file, a
        # traceback's last line): a start failure without it leaves the user guessing
        said = [" ".join(line.split()) for line in self.stderr_tail(lines=3).splitlines() if line.strip()]
        note = " | ".join(said)
        if len(note) > 500:
            note = "..." + note[-497:]
        return f" (it exited with code {code}; its stderr ends: {note})" if note else f" (it exited with code {code})"

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
            _watch(-self.process.pid)  # reaped: its number may be reused, never killed again
        except subprocess.TimeoutExpired:
            pass
        # stdout and stderr stay open until this object goes: another thread may be reading
        # them right now (an interruption kills from the main thread), and closing an fd
        # under a reader could hand its number to another file.
        self._input_closed = True
        self._outgoing.clear()
        try:
            if self.process.stdin:
                self.process.stdin.close()
        except OSError:
            pass

    def _stderr_now(self) -> _RingBuffer:
        """The stderr buffer with everything written so far: what the pipe still holds taken
        first, so that a mark or a tail does not depend on how far the drain thread has got."""
        try:
            self._take_stderr()
        except (OSError, ValueError):
            pass
        return self.stderr

    def stderr_mark(self) -> int:
        """A mark for ``stderr_tail``: the stderr written so far does not belong to what follows."""
        return self._stderr_now().total

    def stderr_tail(self, lines: int = 20, since: int = 0) -> str:
        """The last lines the implementation wrote on stderr (after the mark ``since``), clipped."""
        text = "\n".join(self._stderr_now().text(since).splitlines()[-lines:])
        return text if len(text) <= STDERR_TAIL_BYTES else "..." + text[-STDERR_TAIL_BYTES:]


class _NotANumber(ValueError):
    pass


def _refuse_constant(name: str) -> Any:
    raise _NotANumber(name)


# NaN and Infinity are not JSON: Python would read them, and a report or a cache written
# from them could not be read back by any JSON reader
_DECODER = json.JSONDecoder(parse_constant=_refuse_constant)
# a lone surrogate comes as a \uD800-\uDFFF escape or (read with surrogatepass) as the raw code
# point; a line with neither, nearly every line, is not walked
_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]|[\ud800-\udfff]")
_LONE = re.compile("[\ud800-\udfff]")


def decode_reply(command: str, line: bytes) -> tuple[dict[str, Any], int]:
    """The reply object of one line, and how many of its strings held a lone surrogate (each
    replaced by U+FFFD: every string an implementation sends is valid UTF-8 from here on, so
    that no report, transcript or page written from it can fail to encode).
    ProtocolFailure for a line that is not a JSON object, or holds NaN or Infinity."""
    try:
        # json.loads on bytes guesses the encoding; a line opening with "{" and a non-NUL
        # byte is UTF-8 by that same guess, decoded here without the guessing
        encoding = "utf-8" if line[:1] == b"{" and line[1:2] != b"\0" else json.detect_encoding(line)
        text = line.decode(encoding, "surrogatepass")
        reply = _DECODER.decode(text)
    except _NotANumber as exc:
        raise ProtocolFailure(f"reply to {command!r} holds {exc}, which is not a JSON number: {_clip(line)}") from None
    except (ValueError, UnicodeDecodeError, LookupError):
        raise ProtocolFailure(f"reply to {command!r} is not JSON: {_clip(line)}") from None
    except RecursionError:
        raise ProtocolFailure(f"reply to {command!r} is nested too deeply to read: {_clip(line)}") from None
    if not isinstance(reply, dict):
        raise ProtocolFailure(f"reply to {command!r} is not a JSON object: {_clip(line)}")
    if not _SURROGATE.search(text):
        return reply, 0
    counter = [0]
    try:
        repaired = _repair(reply, counter)
    except RecursionError:  # the decoder read it, with less of the stack in use
        raise ProtocolFailure(f"reply to {command!r} is nested too deeply to read: {_clip(line)}") from None
    assert isinstance(repaired, dict)
    return repaired, counter[0]


def _repair(value: Any, counter: list[int]) -> Any:
    """``value`` with every lone surrogate in its strings (keys too) replaced by U+FFFD."""
    if isinstance(value, str):
        if _LONE.search(value):
            counter[0] += 1
            return _LONE.sub("\ufffd", value)
        return value
    if isinstance(value, list):
        return [_repair(item, counter) for item in value]
    if isinstance(value, dict):
        return {_repair(key, counter): _repair(item, counter) for key, item in value.items()}
    return value


def _clip(data: bytes, limit: int = 200) -> str:
    text = data.decode("utf-8", errors="replace").rstrip("\n")
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} characters)"


# --- descendants that leave the process group ------------------------------------------

def become_subreaper() -> bool:
    """Make this process adopt its orphaned descendants (Linux), so that a helper that
    calls setsid() and outlives its parent is still ours to kill; False where unsupported."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def _children(parent: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text(encoding="ascii", errors="replace")
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[-1].split()  # after the command name, which may hold spaces
        if len(fields) > 1 and fields[1] == str(parent):
            found.append(int(entry.name))
    return found


def kill_adopted(rounds: int = 20) -> int:
    """Kill and reap every child of this process (after a run every implementation is gone,
    so any child left is a descendant it adopted); returns how many were killed."""
    if not Path("/proc/self/stat").exists():
        return 0
    killed = 0
    for _ in range(rounds):
        children = _children(os.getpid())
        if not children:
            break
        for pid in children:
            try:
                os.kill(pid, signal.SIGKILL)
                killed += 1
            except (ProcessLookupError, PermissionError):
                pass
        for pid in children:  # their own children are adopted next round
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass
    return killed


# --- a watchdog: the implementations die with the runner, even by SIGKILL ----------------

# The watchdog is a tiny process in its own session (a signal to the runner's group does not
# reach it) reading, on a pipe only the runner holds, the process group of every
# implementation started ("N") and reaped ("-N"). When the pipe closes (the runner ended,
# whatever ended it: SIGKILL, an uncaught signal, a crash) it kills every group still listed,
# so that no implementation, nor anything it started in its group, outlives the runner. A
# parent-death signal (prctl) would not do: it fires when the thread that started the process
# ends, and implementations are started from worker threads that end before the run does.
_WATCHDOG = """
import os, signal
groups, pending = set(), b""
while True:
    try:
        chunk = os.read(0, 65536)
    except InterruptedError:
        continue
    if not chunk:
        break
    *lines, pending = (pending + chunk).split(b"\\n")
    for line in lines:
        number = int(line)
        (groups.add if number > 0 else groups.discard)(abs(number))
for group in groups:
    try:
        os.killpg(group, signal.SIGKILL)
    except OSError:
        pass
"""


class Watchdog:
    """The runner's end of the watchdog's pipe; ``close`` ends it (killing what is listed)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.process = subprocess.Popen([sys.executable, "-I", "-S", "-c", _WATCHDOG], stdin=subprocess.PIPE,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                        start_new_session=True)

    def tell(self, group: int) -> None:
        """``group`` started (positive) or reaped (negative)."""
        with self._lock:
            try:
                assert self.process.stdin is not None
                self.process.stdin.write(f"{group}\n".encode("ascii"))
                self.process.stdin.flush()
            except (OSError, ValueError):
                pass  # the watchdog is gone: the run goes on without it

    def close(self) -> None:
        with self._lock:
            try:
                assert self.process.stdin is not None
                self.process.stdin.close()
            except OSError:
                pass
        try:
            self.process.wait(timeout=5.0)
        except subprocess.TimeoutExpired:
            self.process.kill()


_watchdog: Watchdog | None = None  # while a supervised run goes on


def _watch(group: int) -> None:
    watchdog = _watchdog
    if watchdog is not None:
        watchdog.tell(group)


@contextmanager
def supervised() -> Iterator[None]:
    """Around a run of implementations: descendants that left their process group are
    adopted, and killed when the run ends (whatever ended it); every implementation's group
    is killed by the watchdog if the runner dies without ending the run."""
    global _watchdog
    subreaper = become_subreaper()
    started = _watchdog is None
    if started:
        try:
            _watchdog = Watchdog()
        except OSError:
            _watchdog = None
    try:
        yield
    finally:
        if started and _watchdog is not None:
            watchdog, _watchdog = _watchdog, None
            watchdog.close()
        if subreaper:
            kill_adopted()


# --- signals: SIGINT, SIGTERM and SIGHUP stop a run, with one line ----------------------

SIGNALS = {signal.SIGINT: "SIGINT", signal.SIGTERM: "SIGTERM"}
if hasattr(signal, "SIGHUP"):
    SIGNALS[signal.SIGHUP] = "SIGHUP"


class Interrupted(KeyboardInterrupt):
    """SIGINT, SIGTERM or SIGHUP: the run stops; the caller says so and exits 128 + signum."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum

    @property
    def name(self) -> str:
        return SIGNALS.get(signal.Signals(self.signum), str(self.signum))


def _raise_interrupted(signum: int, _frame: FrameType | None) -> None:
    for number in SIGNALS:  # a second signal while the run winds down is ignored
        signal.signal(number, signal.SIG_IGN)
    raise Interrupted(signum)


def trap_signals() -> dict[int, Any]:
    """Turn SIGINT, SIGTERM and SIGHUP into Interrupted in the main thread."""
    saved: dict[int, Any] = {}
    try:
        for number in SIGNALS:
            saved[number] = signal.signal(number, _raise_interrupted)
    except ValueError:  # not the main thread (an embedding caller): leave signals alone
        pass
    return saved


def restore_signals(saved: dict[int, Any]) -> None:
    for number, handler in saved.items():
        signal.signal(number, handler)
