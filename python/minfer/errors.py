"""The exceptions minfer raises for a library error.

Every error of the C++ libraries reaches Python as one of these, with the library's fields as
attributes (docs/ERRORS.md explains each code and what ``expected`` and ``found`` hold for it):

- :class:`InvalidFileError` (a :class:`ValueError`): the file is not a valid GGUF model, or its
  values cannot be used (``minfer`` exits with 1 for these).
- :class:`RequestError` (a :class:`ValueError`): the file is fine, but cannot do what was asked
  (a key that is absent, no room for an in-place edit, an undo journal beside the file, a value
  given as text that does not parse).
- :class:`GGUFIOError` (an :class:`OSError`): a file or URL could not be opened or read, memory ran
  out, a transfer failed (``minfer`` exits with 3). ``errno`` is set when the system gave one.

All three derive from :class:`GGUFError`, so ``except minfer.GGUFError`` catches any of them.
"""

from __future__ import annotations

from typing import Optional, Tuple

__all__ = ["GGUFError", "InvalidFileError", "RequestError", "GGUFIOError"]


class GGUFError(Exception):
    """A minfer library error. ``str(e)`` is the message the ``minfer`` command prints."""

    code: str
    """The error code's name, as in docs/ERRORS.md: ``"bad_magic"``, ``"data_truncated"``, …"""
    message: str
    file: Optional[str]
    """The file (or URL, or part of a split set) the error is about; None when none."""
    section: str
    """Where in the file: ``"header"``, ``"metadata"``, ``"tensor_info"``, ``"data"``, ``"split"``, …"""
    offset: int
    """Absolute byte offset of the offending field in ``file``."""
    subject: Optional[str]
    """The key or tensor name concerned (as text; undecodable bytes are escaped); None when none."""
    expected: int
    found: int
    index: Optional[int]
    """The metadata entry or tensor ordinal within its file; None when not applicable."""
    item: Optional[int]
    """The array item concerned; None when not applicable."""
    part: Optional[int]
    """1-based part of a split set; None for a single file."""
    n_parts: Optional[int]
    detail: Optional[str]
    exit_code: int
    """What ``minfer`` exits with for this error: 1 invalid file or findings, 2 usage, 3 I/O."""

    def __init__(self, message: str, **fields: object) -> None:
        super().__init__(message)
        self._set_fields(message, fields)

    def _set_fields(self, message: str, fields: dict) -> None:
        self.message = message
        self.code = str(fields.get("code", "unknown"))
        self.file = fields.get("file")  # type: ignore[assignment]
        self.section = str(fields.get("section", "file"))
        self.offset = int(fields.get("offset", 0))  # type: ignore[arg-type]
        self.subject = fields.get("subject")  # type: ignore[assignment]
        self.expected = int(fields.get("expected", 0))  # type: ignore[arg-type]
        self.found = int(fields.get("found", 0))  # type: ignore[arg-type]
        self.index = fields.get("index")  # type: ignore[assignment]
        self.item = fields.get("item")  # type: ignore[assignment]
        self.part = fields.get("part")  # type: ignore[assignment]
        self.n_parts = fields.get("n_parts")  # type: ignore[assignment]
        self.detail = fields.get("detail")  # type: ignore[assignment]
        self.exit_code = int(fields.get("exit_code", 1))  # type: ignore[arg-type]

    def __str__(self) -> str:
        return self.message

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code!r}, file={self.file!r}, offset={self.offset})"

    @property
    def fields(self) -> Tuple[Tuple[str, object], ...]:
        """Every field as (name, value) pairs, for logging."""
        names = ("code", "file", "section", "offset", "subject", "expected", "found", "index", "item",
                 "part", "n_parts", "detail", "exit_code")
        return tuple((n, getattr(self, n)) for n in names)


class InvalidFileError(GGUFError, ValueError):
    """The file is not a valid GGUF model (any parse, layout or split error), or a value in it
    cannot be used (``bad_hyperparameter``)."""


class RequestError(GGUFError, ValueError):
    """The file is valid but cannot do what was asked (``key_not_found``, ``no_room_in_place``,
    ``journal_present``, ``bad_value_text``, ``type_not_convertible``, …)."""


class GGUFIOError(GGUFError, OSError):
    """A file or URL could not be opened or read, memory ran out, or a transfer failed."""

    def __init__(self, message: str, **fields: object) -> None:
        err = fields.get("errno")
        if err:
            OSError.__init__(self, int(err), message, fields.get("file"))  # type: ignore[arg-type]
        else:
            OSError.__init__(self, message)
        self._set_fields(message, fields)


def _make(kind: str, message: str, fields: dict) -> GGUFError:
    """Called by the extension modules: the exception for one library error."""
    cls = {"invalid": InvalidFileError, "request": RequestError, "io": GGUFIOError}.get(kind, GGUFError)
    return cls(message, **fields)
