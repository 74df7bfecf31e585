"""The one exception this package raises for bad input (ProfileError), and its base."""

from __future__ import annotations


class FileProblem(Exception):
    """Bad input at a place in a file.

    ``file`` is the file concerned (or the name asked for), ``line`` and ``column`` are
    1-based (``None`` when no position applies), ``path`` is the field in dotted form
    (``rules.auction.bid_step``; empty for the whole file) and ``message`` says what was
    expected.
    """

    def __init__(
        self,
        file: str,
        message: str,
        *,
        line: int | None = None,
        column: int | None = None,
        path: str = "",
    ) -> None:
        self.file = file
        self.line = line
        self.column = column
        self.path = path
        self.message = message
        super().__init__(self.__str__())

    def __str__(self) -> str:
        where = self.file
        if self.line is not None:
            where += f":{self.line}"
            if self.column is not None:
                where += f":{self.column}"
        field = f" {self.path}:" if self.path else ""
        return f"{where}:{field} {self.message}"


class ProfileError(FileProblem):
    """A profile (or a profile name) is invalid; the attributes are those of FileProblem.

    ``more`` holds the other errors found in the same check of the same file (a file with
    three mistakes reports three, so one run is enough to fix them); ``all()`` is this error
    and those, in file order."""

    more: tuple["ProfileError", ...] = ()

    def all(self) -> tuple["ProfileError", ...]:
        return (self, *self.more)


def raise_all(problems: "list[ProfileError]") -> None:
    """Raise the first problem (by position in the file) carrying the others; nothing when none."""
    if not problems:
        return
    ordered = sorted(problems, key=lambda p: (p.file, p.line or 0, p.column or 0))
    first = ordered[0]
    first.more = tuple(ordered[1:])
    raise first
