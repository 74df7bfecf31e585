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
    """A profile (or a profile name) is invalid; the attributes are those of FileProblem."""
