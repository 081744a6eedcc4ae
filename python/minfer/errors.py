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

from typing import Dict, Optional, Tuple

__all__ = ["GGUFError", "InvalidFileError", "RequestError", "GGUFIOError"]


class GGUFError(Exception):
    """A minfer library error. ``str(e)`` is the message the ``minfer`` command prints."""

    code: str
    """The error code's name, as in docs/ERRORS.md: ``"bad_magic"``, ``"data_truncated"``, …; two
    codes belong to the toolbox functions alone (docs/PYTHON.md): ``"usage"`` (a request the
    command line would refuse: the output exists, the output is the input, a bad argument value;
    exit_code 2) and ``"manifest_no_known_hash"`` (a manifest without a line of a known hash type)."""
    message: str
    file: Optional[str]
    """The file (or URL, or part of a split set) the error is about; None when none."""
    section: str
    """Where in the file: ``"header"``, ``"metadata"``, ``"tensor_info"``, ``"data"``, ``"split"``, …"""
    offset: int
    """Absolute byte offset of the offending field in ``file``."""
    subject: Optional[str]
    """The key or tensor name concerned; bytes that are not UTF-8 come as lone surrogates
    (``subject.encode("utf-8", "surrogateescape")`` gives them back); None when none."""
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

    def _set_fields(self, message: str, fields: Dict[str, object]) -> None:
        self.message = message
        self.code = _str(fields.get("code")) or "unknown"
        self.file = _str(fields.get("file"))
        self.section = _str(fields.get("section")) or "file"
        self.offset = _int(fields.get("offset")) or 0
        self.subject = _str(fields.get("subject"))
        self.expected = _int(fields.get("expected")) or 0
        self.found = _int(fields.get("found")) or 0
        self.index = _int(fields.get("index"))
        self.item = _int(fields.get("item"))
        self.part = _int(fields.get("part"))
        self.n_parts = _int(fields.get("n_parts"))
        self.detail = _str(fields.get("detail"))
        self.exit_code = _int(fields.get("exit_code")) or 1

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
        err = _int(fields.get("errno"))
        if err:
            OSError.__init__(self, err, message, _str(fields.get("file")))
        else:
            OSError.__init__(self, message)
        self._set_fields(message, fields)


def _int(v: object) -> Optional[int]:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _str(v: object) -> Optional[str]:
    return v if isinstance(v, str) else None


def _make(kind: str, message: str, fields: Dict[str, object]) -> GGUFError:
    """Called by the extension modules: the exception for one library error."""
    cls = {"invalid": InvalidFileError, "request": RequestError, "io": GGUFIOError}.get(kind, GGUFError)
    return cls(message, **fields)
