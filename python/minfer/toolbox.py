"""The ``minfer`` command's toolbox as Python functions: edit, split, merge, hash, verify, estimate,
diff (and edit_recover).

Each function has the command's semantics, checks and refusals (docs/CLI.md), and calls the same
C++ libraries (``minfer::gguf_write``, ``minfer::check``, ``minfer::estimate``, ``minfer::quant``)
through ``minfer._toolbox``; nothing shells out. Options are keyword arguments named after the
command's options; results are structured:

- ``verify``, ``estimate`` and ``diff`` return dicts with exactly the keys of the command's
  ``--json`` document (``minfer verify --json`` …). JSON's ``"nan"``/``"inf"`` strings are Python
  floats here, and names that are not UTF-8 are ``str`` with lone surrogates
  (``s.encode("utf-8", "surrogateescape")`` gives the bytes) instead of the ``_hex`` members.
- ``edit``, ``split``, ``merge`` and ``hash`` (whose commands print text) return small
  dataclasses defined here; ``hash`` also gives the command's output lines, byte for byte.

Findings are results, not exceptions: ``verify`` reports NaN values in its dict, ``diff`` reports
differences, ``hash`` a manifest mismatch (each with the ``exit_code`` the command would give).
Errors raise minfer.errors' exceptions with the library's code: an invalid file
:class:`~minfer.errors.InvalidFileError`, I/O :class:`~minfer.errors.GGUFIOError` (an OSError),
a request the file cannot honour :class:`~minfer.errors.RequestError` (``key_not_found``,
``token_not_found``, ``no_room_in_place``, ``journal_present``, ``bad_value_text`` …). What the
command refuses as a usage error without a library code (an output that exists, an output that is
the input, an argument out of range) is a RequestError with ``code == "usage"`` and
``exit_code == 2``. Arguments of the wrong Python type raise TypeError.

Writes go through the library's atomic writer: an output file holds nothing or the complete file
(a failed split removes the parts it wrote); inputs are never modified except by
``edit(in_place=True)``, which is journaled (see :func:`edit_recover`). The long work (hashing,
verifying, writing, comparing values) runs without the GIL.

The files are read through a memory mapping: a file that another process truncates while it is
read makes the kernel send SIGBUS, which kills the process, as with numpy's memmap
(``verify(..., mmap=False)`` and ``diff(..., mmap=False)`` read the files into memory first).
"""

from __future__ import annotations

import builtins
import numbers
import os
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterable, List, Mapping, NoReturn, Optional, Sequence, Tuple, TypedDict, Union, cast

from . import _toolbox
from .types import TensorType, ValueType

__all__ = [
    "edit", "edit_recover", "edit_discard_journal", "split", "merge", "hash", "verify", "estimate", "diff", "parse_size",
    "EditResult", "KeyChange", "SplitResult", "SplitPart", "MergeResult", "MergeWarning", "HashResult",
    "VerifyReport", "TensorReport", "Finding", "EstimateReport", "DeviceFigures", "DiffReport",
    "quantize", "QuantizeResult", "QuantizeOutput", "TensorPlan",
    "prune", "PruneResult", "PrunedTensor", "PrunedKey",
    "assemble", "AssembleResult", "AssembledTensor",
    "convert", "ConvertResult", "ConvertedTensor",
    "report",
]

PathLike = Union[str, "os.PathLike[str]", bytes]
Value = Union[bool, int, float, str]
TypedValue = Tuple[Union[str, ValueType], Value]

# ----------------------------------------------------------------------------------------- helpers


def _path(p: Any, what: str) -> bytes:
    """A path argument as the file system's bytes (str, bytes or os.PathLike)."""
    if isinstance(p, (str, bytes)) or hasattr(p, "__fspath__"):
        return os.fsencode(p)
    raise TypeError(f"{what} must be a path (str, bytes or os.PathLike), not {type(p).__name__}")


def _text(s: Any, what: str) -> bytes:
    """A str argument as the bytes the library takes (lone surrogates back to their bytes)."""
    if isinstance(s, str):
        return s.encode("utf-8", "surrogateescape")
    raise TypeError(f"{what} must be a str, not {type(s).__name__}")


def _bool(v: Any, what: str) -> bool:
    if isinstance(v, bool):
        return v
    raise TypeError(f"{what} must be a bool, not {type(v).__name__}")


def _int(v: Any, what: str, lo: int = 0, hi: int = 2**64 - 1) -> int:
    if isinstance(v, bool) or not isinstance(v, numbers.Integral):
        raise TypeError(f"{what} must be an int, not {type(v).__name__}")
    v = int(v)
    if v < lo or v > hi:
        _usage(f"{what} {v}: expected {lo} to {hi}")
    return v


def _usage(message: str) -> NoReturn:
    from .errors import RequestError

    raise RequestError(message, code="usage", section="access", exit_code=2)


def parse_size(size: Union[int, str], what: str = "size") -> int:
    """A size as the command line writes it (``split --split-max-size``, ``edit --reserve``): an
    int (bytes), or text: a number with an optional fraction, then a unit: none (bytes, whole
    numbers only), ``K M G T`` (10³ … 10¹², decimal) or ``KiB MiB GiB TiB`` (2¹⁰ … 2⁴⁰); a fraction
    is rounded down to whole bytes. ``"2G"`` = 2000000000, ``"1.5GiB"`` = 1610612736.

    RequestError ``usage`` for a bare unit, a sign, 0 bytes, an unknown or lowercase unit, a
    fraction of bytes, spaces, or more than 2⁶⁴−1."""
    if isinstance(size, bool):
        raise TypeError(f"{what} must be an int or a str, not bool")
    if isinstance(size, numbers.Integral):
        n = int(size)
    elif isinstance(size, str):
        # read by the C++ parser the minfer tool uses (minfer::toolbox::parse_size): one syntax
        parsed, why = _toolbox.parse_size(size)
        if parsed is None:
            _usage(f"{what}: {size!r}: {why}")
        n = parsed
    else:
        raise TypeError(f"{what} must be an int or a str, not {type(size).__name__}")
    if n < 1:
        _usage(f"{what}: {size!r}: at least 1 byte")
    if n > 2**64 - 1:
        _usage(f"{what}: {size!r}: more than 2^64-1 bytes")
    return n


# ------------------------------------------------------------------------------------------- edit

_TYPE_NAMES = {
    ValueType.UINT8: "u8", ValueType.INT8: "i8", ValueType.UINT16: "u16", ValueType.INT16: "i16",
    ValueType.UINT32: "u32", ValueType.INT32: "i32", ValueType.UINT64: "u64", ValueType.INT64: "i64",
    ValueType.FLOAT32: "f32", ValueType.FLOAT64: "f64", ValueType.BOOL: "bool", ValueType.STRING: "str",
}


def _value_text(v: Any, key: str) -> bytes:
    """A Python value as the value text the library parses (strictly, for the key's type)."""
    if isinstance(v, bool):
        return b"true" if v else b"false"
    if isinstance(v, numbers.Integral):
        return str(int(v)).encode()
    if isinstance(v, numbers.Real):
        return repr(float(v)).encode()  # the shortest text that reads back as the same double
    if isinstance(v, str):
        return v.encode("utf-8", "surrogateescape")
    raise TypeError(f"the value for key {key!r} must be a bool, int, float or str "
                    f"(or a (type, value) pair), not {type(v).__name__}")


def _type_name(t: Any, key: str) -> bytes:
    if isinstance(t, ValueType):
        if t not in _TYPE_NAMES:
            _usage(f"key {key!r}: {t.name} values cannot be set (only scalars and strings)")
        return _TYPE_NAMES[t].encode()
    if isinstance(t, str):
        return t.encode("utf-8", "surrogateescape")
    raise TypeError(f"the type for key {key!r} must be a ValueType or a type name such as 'u32', "
                    f"not {type(t).__name__}")


@dataclass
class KeyChange:
    """One key an edit adds, changes (type or value) or removes, as ``minfer edit`` lists it.

    ``before``/``after``: ``{"type": "u32", "value": 2}`` for a scalar or string (the value as a
    Python object), ``{"type": "array", "element_type": "u8", "count": 313}`` for an array; None
    when the key is absent on that side."""

    key: str
    change: str  # "added", "changed" or "removed"
    before: Optional[Dict[str, Any]]
    after: Optional[Dict[str, Any]]
    forced_over: Optional[str] = None
    """With ``allow_type_change``: the type the key should have kept (``"u32"``, …) when the edit
    gave it another; None otherwise (``minfer edit`` marks such a line)."""


@dataclass
class EditResult:
    """What :func:`edit` did (or, with ``dry_run``, would do)."""

    path: str
    output: Optional[str]
    """The file written (the model itself for an in-place edit); None for a dry run without one."""
    diff: List[KeyChange]
    """The input's keys in file order, then the added ones; a change to a key's own value is not
    listed (an empty list: nothing to change)."""
    warnings: List[str]
    dry_run: bool
    in_place: bool
    written: bool
    """False for a dry run, and for an in-place edit that changes nothing (nothing is written)."""
    file_size: Optional[int]
    """The size of the file written."""
    n_tensors: int
    reserve: int
    """Bytes of room reserved (a ``minfer.padding`` key of that many zeros); 0 for none."""
    head_bytes: Optional[int] = None
    """In place: the bytes rewritten before the tensor data."""
    in_place_padding: Optional[int] = None
    """In place (or a dry run): the size of the padding key's array after the edit."""
    in_place_fits: Optional[bool] = None
    """A dry run: whether the edit would fit in place."""
    in_place_missing: Optional[int] = None
    """A dry run that does not fit: the bytes missing."""
    in_place_error: Optional[str] = None
    """A dry run that cannot be done in place: the error code (``no_room_in_place``, …)."""


def edit(path: PathLike, output: Optional[PathLike] = None, *,
         set: Union[Mapping[str, Union[Value, TypedValue]], Iterable[str], None] = None,
         delete: Iterable[str] = (),
         name: Optional[str] = None,
         description: Optional[str] = None,
         chat_template: Optional[str] = None,
         special_tokens: Optional[Mapping[str, Union[int, str]]] = None,
         reserve: Union[int, str] = 0,
         in_place: bool = False,
         dry_run: bool = False,
         overwrite: bool = False,
         allow_type_change: bool = False) -> EditResult:
    """Change a model's metadata (``minfer edit``): into a new file ``output``, or in place.

    Tensors are never touched: a new file gets every tensor's info and bytes as in the input
    (copied by the kernel); an in-place edit rewrites only the bytes before the data section,
    journaled (:func:`edit_recover`). Every change is checked before anything is written.

    Changes (at least one, or ``reserve`` alone) apply in this order, each seeing the earlier ones: ``set`` (in its
    order), ``delete``, ``chat_template``, ``special_tokens``, ``name``, ``description``.

    - ``set``: a mapping ``key -> value``: a bool, int, float or str sets an *existing* key,
      which keeps its type (the value must fit it: ``300`` for a u8 key is ``bad_value_text``; an
      absent key is ``key_not_found``); a pair ``(type, value)`` adds a key (``type``: a
      :class:`~minfer.types.ValueType` or ``"u8" … "i64", "f32", "f64", "bool", "str"``). A key
      llama.cpp reads (``general.*``, ``tokenizer.*``, the ``{arch}.*`` hyperparameters) must keep
      llama.cpp's type, another existing key its own: a different type is ``bad_value_text``
      naming the expected type, unless ``allow_type_change=True`` (then the diff entry's
      ``forced_over`` names it). ``split.*`` keys are refused (only split and merge write them).
      Or an iterable of the command's texts ``"KEY=VALUE"`` / ``"KEY:TYPE=VALUE"``.
    - ``delete``: keys to remove (each must exist).
    - ``chat_template``: every ``tokenizer.chat_template*`` key goes, then
      ``tokenizer.chat_template`` is added.
    - ``special_tokens``: ``{"eos": "<|im_end|>", "bos": 1}``: ``tokenizer.ggml.<name>_token_id``
      set to a token's id (an int, or a str of digits) or found by its text.
    - ``name``, ``description``: ``general.name``, ``general.description``.

    Options: ``reserve`` (with ``output``: room for later in-place edits, bytes or a size text
    such as ``"64KiB"``, at most 1 GiB), ``in_place`` (``output`` must then be None or the model
    itself), ``dry_run`` (check everything, say whether an in-place edit would fit, write
    nothing), ``overwrite`` (replace an existing ``output``; never the input).

    Raises RequestError (``key_not_found``, ``token_not_found``, ``bad_value_text``,
    ``no_room_in_place``, ``journal_present``, ``journal_invalid``, ``usage``), InvalidFileError,
    GGUFIOError. A failed write leaves no output; a refused in-place edit leaves the model as it
    was."""
    p = _path(path, "path")
    out = b"" if output is None else _path(output, "output")
    changes: List[Tuple[str, bytes, bytes, bytes]] = []
    if set is not None:
        if isinstance(set, Mapping):
            for k, v in set.items():
                kb = _text(k, "a key of set")
                if isinstance(v, tuple):
                    if len(v) != 2:
                        raise TypeError(f"set[{k!r}]: a typed value is a (type, value) pair")
                    changes.append(("set_typed", kb, _type_name(v[0], k), _value_text(v[1], k)))
                else:
                    changes.append(("set", kb, b"", _value_text(v, k)))
        elif isinstance(set, (str, bytes)):
            raise TypeError("set must be a mapping or an iterable of 'KEY=VALUE' strings, not a single string")
        else:
            for item in set:
                changes.append(("text", b"", b"", _text(item, "an item of set")))
    if isinstance(delete, (str, bytes)):
        raise TypeError("delete must be an iterable of keys, not a single string")
    for k in delete:
        changes.append(("delete", _text(k, "a key of delete"), b"", b""))
    if chat_template is not None:
        changes.append(("chat_template", b"", b"", _text(chat_template, "chat_template")))
    if special_tokens is not None:
        if not isinstance(special_tokens, Mapping):
            raise TypeError("special_tokens must be a mapping name -> token id or text")
        for tn, tok in special_tokens.items():
            if isinstance(tok, bool) or not isinstance(tok, (numbers.Integral, str)):
                raise TypeError(f"special_tokens[{tn!r}] must be a token id (int) or a token's text (str)")
            tok_text = str(int(tok)).encode() if isinstance(tok, numbers.Integral) else _text(tok, "token")
            changes.append(("special_token", _text(tn, "a special token name"), b"", tok_text))
    if name is not None:
        changes.append(("name", b"", b"", _text(name, "name")))
    if description is not None:
        changes.append(("description", b"", b"", _text(description, "description")))
    room = 0 if (isinstance(reserve, numbers.Integral) and not isinstance(reserve, bool) and reserve == 0) \
        else parse_size(reserve, "reserve")
    r = _toolbox.edit(p, out, changes, room, _bool(in_place, "in_place"), _bool(dry_run, "dry_run"),
                      _bool(overwrite, "overwrite"), _bool(allow_type_change, "allow_type_change"))
    r["diff"] = [KeyChange(**d) for d in r["diff"]]
    return EditResult(**r)


def edit_recover(path: PathLike) -> str:
    """Resolve an interrupted in-place edit of ``path`` from its undo journal
    (``minfer edit --recover``). Returns ``"nothing_to_do"`` (no journal), ``"rolled_back"`` (the
    old head is back) or ``"completed"`` (the new head was complete; the journal is removed).
    Raises RequestError ``journal_invalid`` (a damaged journal, or one made for another file:
    check the model, then :func:`edit_discard_journal`), GGUFIOError."""
    return _toolbox.edit_recover(_path(path, "path"))


def edit_discard_journal(path: PathLike) -> bool:
    """Remove the undo journal beside ``path`` without using it (``minfer edit --discard-journal``):
    the way out when :func:`edit_recover` raises ``journal_invalid``. The model is left as it is, so
    check it first (:func:`verify`). Returns whether there was a journal. Raises GGUFIOError."""
    return _toolbox.edit_discard_journal(_path(path, "path"))


# ------------------------------------------------------------------------------------ split, merge


@dataclass
class SplitPart:
    """One part of a split plan, as ``minfer split --dry-run`` lists it."""

    part: int  # 1-based
    path: str
    n_tensors: int
    file_size: int
    """The exact size of the part file."""
    tensor_bytes: int
    first_tensor: Optional[str]
    last_tensor: Optional[str]
    oversized: bool
    """Over ``max_size``: one tensor (or part 1's metadata) does not fit even alone."""


@dataclass
class SplitResult:
    path: str
    prefix: str
    parts: List[SplitPart]
    n_tensors: int
    total_bytes: int
    """The sum of the part files' sizes."""
    max_size: Optional[int]
    max_tensors: Optional[int]
    no_tensor_first_split: bool
    warnings: List[str]
    dry_run: bool
    written: bool


def split(path: PathLike, prefix: PathLike, *, max_size: Union[int, str, None] = None,
          max_tensors: Optional[int] = None, no_tensor_first_split: bool = False,
          dry_run: bool = False, overwrite: bool = False) -> SplitResult:
    """Write a model (a file, or part 1 of a set: a set can be re-split) as a split set that
    llama.cpp loads (``minfer split``): ``<prefix>-00001-of-0000N.gguf``, … (the prefix used
    exactly as given).

    ``max_size``: at most that many bytes per part *file*, header included (an int, or a size
    text such as ``"2G"`` or ``"1.5GiB"``: see :func:`parse_size`); ``max_tensors``: at most that
    many tensors per part (not both; neither: 128 tensors, llama-gguf-split's default). A tensor
    that does not fit even alone gets a part of its own and a warning (in ``warnings``).
    ``no_tensor_first_split``: part 1 holds the metadata only. ``dry_run``: the plan, nothing
    written. ``overwrite``: replace existing part files (never a file of the input).

    Each part is written atomically, part 1 last; a failure removes the parts this call wrote.
    Raises RequestError ``usage`` (an existing part, a part that is an input file, a bad limit),
    ``too_many_parts`` (more than 65535), InvalidFileError, GGUFIOError."""
    p = _path(path, "path")
    pre = _path(prefix, "prefix")
    size = None if max_size is None else parse_size(max_size, "max_size")
    count = None if max_tensors is None else _int(max_tensors, "max_tensors", 1)
    r = _toolbox.split(p, pre, count, size, _bool(no_tensor_first_split, "no_tensor_first_split"),
                       _bool(dry_run, "dry_run"), _bool(overwrite, "overwrite"))
    r["parts"] = [SplitPart(**d) for d in r["parts"]]
    return SplitResult(**r)


@dataclass
class MergeWarning:
    part: int
    key: str
    message: str


@dataclass
class MergeResult:
    path: str
    output: str
    n_tensors: int
    n_parts: int
    file_size: int
    warnings: List[MergeWarning]
    """Keys of later parts that the merged file drops (it keeps part 1's metadata)."""
    dry_run: bool
    written: bool


def merge(first_part: PathLike, output: PathLike, *, dry_run: bool = False,
          overwrite: bool = False) -> MergeResult:
    """Merge a split set into one file (``minfer merge``): ``first_part`` is part 1; every part
    is found beside it and verified before anything is written. The output holds part 1's
    metadata without the split keys, then every tensor in order (split then merge of a canonical
    file gives its bytes back). ``dry_run``: check and plan only. ``overwrite``: replace an
    existing output (never a part). Raises InvalidFileError (an invalid or inconsistent set;
    ``split_bad_key`` for a file that is not a set), GGUFIOError (``split_part_missing``, a write
    that fails: no output is left), RequestError ``usage``."""
    r = _toolbox.merge(_path(first_part, "first_part"), _path(output, "output"), _bool(dry_run, "dry_run"),
                       _bool(overwrite, "overwrite"))
    r["warnings"] = [MergeWarning(**w) for w in r["warnings"]]
    return MergeResult(**r)


# ------------------------------------------------------------------------------------------- hash

_HASH_KINDS = ("xxh64", "xxh3", "sha1", "sha256", "uuid")


@dataclass
class HashResult:
    """The hashes ``minfer hash`` prints (llama-gguf-hash's names and order)."""

    path: str
    kinds: List[str]
    """The kinds computed, in print order: xxh64, xxh3, sha1, sha256, uuid."""
    tensors: List[Dict[str, Any]]
    """Per tensor in model order: ``{"name": …, "hashes": {kind: hex}}`` (uuid is model-only);
    empty with ``per_tensor=False``."""
    model: Dict[str, str]
    """The whole model's digest per kind (one stream over every tensor's bytes in file order)."""
    files: Optional[List[Dict[str, Any]]]
    """With ``file_sha256``: per part ``{"part", "path", "sha256", "expected", "match"}``."""
    check: Optional[Dict[str, Any]]
    """With ``check``: ``{"manifest", "manifest_kinds", "file_name", "renamed", "outcome",
    "outcome_code", "lines": [{"hash", "tensor", "ours", "status", "manifest", "line"}],
    "unknown_tensors", "conflicting", "missing_tensors"}``."""
    lines: List[str]
    """The command's standard output, line by line (without newlines), byte for byte."""
    exit_code: int
    """What the command exits with: 0; with ``check`` the outcome's code (1 mismatch, 3 no entry,
    6 unknown tensors, 7 tensors missing); 1 when an ``expect`` differs."""

    @property
    def ok(self) -> bool:
        return self.exit_code == 0

    def text(self) -> str:
        """The command's output as one string."""
        return "".join(line + "\n" for line in self.lines)


def hash(path: PathLike, *, kinds: Optional[Iterable[str]] = None, per_tensor: bool = True,
         check: Optional[PathLike] = None, file_sha256: bool = False,
         expect: Optional[Sequence[str]] = None, threads: int = 0) -> HashResult:
    """llama-gguf-hash's hashes of a model (``minfer hash``), in one bounded-memory read.

    ``kinds``: any of ``"xxh64"`` (the default), ``"xxh3"``, ``"sha1"``, ``"sha256"``, ``"uuid"``
    (llama.cpp's UUIDv5, model only), or ``"all"`` (xxh64, sha1, sha256). ``per_tensor=False`` is
    ``--no-layer``. Each tensor's bytes are hashed exactly; the model is one stream over every
    tensor's bytes in file order (a split set hashes like its merged file). Names are
    ``PATH:TENSOR`` and ``PATH`` with PATH as given.

    ``check``: a manifest (llama-gguf-hash's or ``minfer hash``'s output) to check against, by
    tensor name whatever the path; without ``kinds`` its strongest kind is checked. The verdict is
    in ``result.check`` and ``result.exit_code``, not an exception.
    ``file_sha256``: the SHA-256 of each part file (the Hub's LFS checksum); ``expect``: the
    expected one per part, in part order (implies ``file_sha256``; 64 hex digits in either case, as
    the command's ``--expect``). ``threads``: 0 = one per core.

    Raises InvalidFileError, GGUFIOError (``exit_code`` 8 when the model cannot be read while
    checking), RequestError (``manifest_bad_line``, ``manifest_too_large``: exit_code 5;
    ``manifest_no_known_hash``: 4; ``usage``)."""
    p = _path(path, "path")
    names: List[str] = []
    if kinds is not None:
        if isinstance(kinds, (str, bytes)):
            kinds = (kinds,)  # type: ignore[assignment]
        for k in kinds:  # type: ignore[union-attr]
            if not isinstance(k, str):
                raise TypeError(f"kinds must hold str, not {type(k).__name__}")
            if k == "all":
                names += ["xxh64", "sha1", "sha256"]
            elif k in _HASH_KINDS:
                names.append(k)
            else:
                _usage(f"unknown hash kind {k!r}: xxh64, xxh3, sha1, sha256, uuid or all")
    exp: List[str] = []
    if expect is not None:
        if isinstance(expect, (str, bytes)):
            expect = [expect]  # type: ignore[list-item]
        for e in expect:
            if not isinstance(e, str):
                raise TypeError(f"expect must hold str, not {type(e).__name__}")
            exp.append(e)
    manifest = None if check is None else _path(check, "check")
    r = _toolbox.hash(p, names, _bool(per_tensor, "per_tensor"), manifest, _bool(file_sha256, "file_sha256"),
                      exp, _int(threads, "threads", 0, 2**31 - 1))
    return HashResult(**r)


# ------------------------------------------------------------------------------------------ verify


class Finding(TypedDict, total=False):
    place: str  # "element", "scale", "value"
    kind: str  # "nan", "inf"
    index: int
    field: str  # scales only
    value: float
    bits: str


class TensorReport(TypedDict):
    name: str
    index: int
    type: str
    part: int
    elements: int
    bytes: int
    checked: str
    values_checked: bool
    findings: int
    nan: int
    inf: int
    blocks_poisoned: int
    value_nan: int
    value_inf: int
    all_zero: bool
    examples: List[Finding]
    value_examples: List[Finding]


class VocabularyFinding(TypedDict):
    severity: str  # "finding" (llama.cpp aborts or refuses the model) or "warning" (it loads it)
    problem: str  # "duplicate_token", "array_short", "special_id_out_of_range", "merge_part_absent", ...
    key: str
    index: int  # the first offender
    count: int
    what: str


class VerifyReport(TypedDict):
    file: str
    parts: int
    tensors: int
    bytes: int
    values_mode: bool
    checked: Dict[str, int]
    findings: int
    tensors_with_findings: int
    warnings: int
    max_examples: int
    vocabulary_findings: int
    vocabulary_warnings: int
    vocabulary: List[VocabularyFinding]
    tensor_reports: List[TensorReport]
    manifest: Optional[Dict[str, Any]]
    file_sha256: Optional[List[Dict[str, Any]]]
    verdict: str  # "clean" or "failed"
    exit_code: int


def verify(path: PathLike, *, values: bool = False, max_examples: int = 10, threads: int = 0,
           manifest: Optional[PathLike] = None, file_sha256: Optional[Sequence[str]] = None,
           mmap: bool = True) -> VerifyReport:
    """Check a model's numbers (``minfer verify --json``): NaN and ±Inf in float tensors and in
    the scales of quantized blocks, all-zero tensors as warnings; with ``values`` every value of
    every quantized (and f64) tensor converted and checked; the vocabulary as llama.cpp loads it
    (``vocabulary``: duplicate tokens, scores/token types of the wrong length, special ids, merges;
    findings make the verdict ``"failed"``). ``manifest`` (a hash manifest) and
    ``file_sha256`` (the expected SHA-256 of each part file, in part order) fold the download
    checks into the same read.

    Returns the ``--json`` document as a dict: ``verdict`` ``"clean"`` or ``"failed"``, ``findings``,
    ``tensor_reports`` (tensors with findings or warnings, their first ``max_examples`` findings),
    ``manifest``, ``file_sha256``, ``exit_code`` (0 clean, 1 otherwise). Finding values are floats
    (NaN, ±inf). Findings never raise; an invalid file raises InvalidFileError, an unreadable one
    GGUFIOError, a malformed manifest RequestError ``manifest_bad_line``, bad arguments
    RequestError ``usage``. ``mmap=False`` reads the files into memory first."""
    hashes: List[str] = []
    if file_sha256 is not None:
        if isinstance(file_sha256, (str, bytes)):
            file_sha256 = [file_sha256]  # type: ignore[list-item]
        for h in file_sha256:
            if not isinstance(h, str):
                raise TypeError(f"file_sha256 must hold str, not {type(h).__name__}")
            hashes.append(h)
    r = _toolbox.verify(_path(path, "path"), _bool(values, "values"), _int(max_examples, "max_examples", 0, 1000000),
                        _int(threads, "threads", 0, 2**31 - 1),
                        None if manifest is None else _path(manifest, "manifest"), hashes, _bool(mmap, "mmap"))
    return cast(VerifyReport, r)


# ---------------------------------------------------------------------------------------- estimate


class DeviceFigures(TypedDict):
    weights_bytes: int
    kv_cache_bytes: Optional[int]
    compute_buffer_bytes: Optional[int]
    total_bytes: Optional[int]


class EstimateReport(TypedDict):
    model: str
    architecture: str
    architecture_known: bool
    parameters: Dict[str, Any]
    weights_bytes: int
    kv_cache_bytes: Optional[int]
    kv_cache: Optional[Dict[str, Any]]
    cpu_only: Dict[str, DeviceFigures]
    full_gpu_offload: Dict[str, DeviceFigures]


def estimate(path_or_url: PathLike, *, ctx: Optional[int] = None, batch: int = 2048, ubatch: int = 512,
             cache_type_k: str = "f16", cache_type_v: str = "f16", parallel: int = 1,
             flash_attn: str = "auto", max_fetch: Union[int, str, None] = None,
             timeout: Optional[float] = None) -> EstimateReport:
    """What llama.cpp will allocate for a model (``minfer estimate --json``): the weights and the
    KV cache to the byte, the compute buffer within about 10 %, for CPU only
    (``["cpu_only"]["cpu"]``) and full GPU offload (``["full_gpu_offload"]["gpu"|"host"]``), each
    with ``weights_bytes``, ``kv_cache_bytes``, ``compute_buffer_bytes``, ``total_bytes``.

    ``path_or_url``: a file, part 1 of a set, or a URL (``http(s)://``, ``hf://OWNER/REPO/FILE``:
    only the head is fetched; ``max_fetch`` bytes at most (int or size text, default 64 MiB),
    ``timeout`` seconds for the whole fetch, every request and retry included, default 60; ``$HF_TOKEN`` is sent to the Hub only).
    ``ctx`` (default: the model's training context), ``batch``, ``ubatch`` (at most ``batch``),
    ``cache_type_k``/``cache_type_v`` (f32, f16, bf16, q8_0, q4_0, q4_1, iq4_nl, q5_0, q5_1),
    ``parallel`` (1 to 256 sequences), ``flash_attn`` (``"auto"``, ``"on"``, ``"off"``) as llama.cpp's
    context parameters. An unknown architecture has its weights and ``None`` for the rest.

    Raises InvalidFileError (an invalid file; ``bad_hyperparameter``), GGUFIOError, RequestError
    (``usage`` for a bad argument; ``value_out_of_range`` with exit_code 2 for what llama.cpp
    refuses for this model, such as a quantized V cache without flash attention)."""
    if isinstance(path_or_url, str):
        loc = path_or_url.encode("utf-8", "surrogateescape")
    else:
        loc = _path(path_or_url, "path_or_url")
    for nm, v in (("cache_type_k", cache_type_k), ("cache_type_v", cache_type_v), ("flash_attn", flash_attn)):
        if not isinstance(v, str):
            raise TypeError(f"{nm} must be a str, not {type(v).__name__}")
    fetch = None if max_fetch is None else parse_size(max_fetch, "max_fetch")
    seconds = _timeout(timeout)
    n_ctx = None if ctx is None else _int(ctx, "ctx", 1, 0xFFFFFF00)
    r = _toolbox.estimate(loc, n_ctx, _int(batch, "batch", 1, 2**32 - 1), _int(ubatch, "ubatch", 1, 2**32 - 1),
                          cache_type_k, cache_type_v, _int(parallel, "parallel", 1, 256), flash_attn, fetch, seconds)
    return cast(EstimateReport, r)


def _timeout(timeout: Optional[float]) -> Optional[float]:
    """A remote fetch's deadline in seconds (None: the default), checked as --timeout is."""
    if timeout is None:
        return None
    if isinstance(timeout, bool) or not isinstance(timeout, numbers.Real):
        raise TypeError(f"timeout must be a number of seconds, not {type(timeout).__name__}")
    seconds = float(timeout)
    if not seconds > 0:
        _usage(f"timeout {timeout}: expected a positive number of seconds")
    return seconds


# -------------------------------------------------------------------------------------------- diff


class DiffReport(TypedDict):
    a: str
    b: str
    identical: bool
    summary: Dict[str, int]
    metadata: List[Dict[str, Any]]
    tensors: List[Dict[str, Any]]


def diff(a: PathLike, b: PathLike, *, values: bool = False, mmap: bool = True) -> DiffReport:
    """What differs between two models (``minfer diff --json``): metadata key by key (arrays item
    by item: ``first_difference``, ``item_a``, ``item_b``), tensors only in one, with another
    type or shape, or other bytes. Split sets compare as the model they make.

    ``values``: for every listed tensor present in both with the same shape (any two types: a
    q4_0 against its f16 source), both are converted to f32 and compared in double: ``values`` =
    ``{"non_finite_mismatches", "first_non_finite_mismatch" ({"index", "a", "b"} or None), "count",
    "compared", "max_abs_diff", "rmse", "cosine",
    "relative_error"}`` (B is the reference; ``None`` where undefined), or ``values_error`` =
    ``{"code", "message"}`` for a type that does not convert.

    Returns the ``--json`` document as a dict (``identical`` is the command's exit code 0).
    Raises InvalidFileError, GGUFIOError."""
    return cast(DiffReport, _toolbox.diff(_path(a, "a"), _path(b, "b"), _bool(values, "values"), _bool(mmap, "mmap")))


# ---------------------------------------------------------------------------------------- quantize

TensorPlan = TypedDict("TensorPlan", {
    "name": str, "from": TensorType, "to": TensorType, "why": str, "fallback": bool, "converted": bool,
    "quantizable": bool, "needs_importance": bool,
})
TensorPlan.__doc__ = """One tensor's decision: ``from`` (its input type) → ``to`` (its output type), ``why`` (the
rule that decided, one line), ``fallback`` (the row length did not fit the chosen type's blocks: ``to``
is its fallback), ``converted`` (``to != from``: the values are converted), ``quantizable`` (llama.cpp's
rules let the tensor change type at all), ``needs_importance`` (llama.cpp refuses ``to`` here without
an imatrix)."""


class QuantizeOutput(TypedDict):
    path: str
    file_size: int
    """Exact: header, metadata, tensor table, padding and data."""
    tensor_count: int


@dataclass
class QuantizeResult:
    """What :func:`quantize` wrote (or, with ``dry_run``, would write)."""

    input: str
    output: str
    type: str
    """The file type as llama-quantize names it (``"Q4_K_M"``)."""
    plan: List[TensorPlan]
    """One entry per tensor, in the output's order (llama.cpp's: by layer, then by name)."""
    outputs: List[QuantizeOutput]
    """The files, in part order (one unless ``keep_split`` or a split limit)."""
    warnings: List[str]
    written: bool
    dry_run: bool
    file_size: int
    """The sum of the outputs' sizes: exact in a dry run too."""
    input_tensor_bytes: int
    output_tensor_bytes: int
    """The tensors' bytes, without padding."""
    n_elements: int
    n_fallback: int
    """Tensors whose row length needed a fallback type (llama.cpp's warning count)."""
    imatrix_entries: int
    """Importance entries used after include/exclude (0: no imatrix)."""

    @property
    def bits_per_weight(self) -> float:
        """Output tensor bits per value, as llama-quantize reports the model size."""
        return 8.0 * self.output_tensor_bytes / self.n_elements if self.n_elements else 0.0


def _strings(v: Any, what: str) -> List[bytes]:
    if isinstance(v, (str, bytes)):
        raise TypeError(f"{what} must be an iterable of str, not a single string")
    return [_text(s, f"an item of {what}") for s in v]


def _tensor_types(v: Any) -> List[Tuple[bytes, bytes]]:
    """tensor_types as (pattern, type name) pairs, in order: a mapping, "PATTERN=TYPE" texts (split at
    the first "=", as llama-quantize's --tensor-type) or (pattern, type) pairs."""
    if isinstance(v, (str, bytes)):
        raise TypeError("tensor_types must be a mapping or an iterable of 'PATTERN=TYPE' strings or (pattern, type) "
                        "pairs, not a single string")
    items = v.items() if isinstance(v, Mapping) else v
    out: List[Tuple[bytes, bytes]] = []
    for item in items:
        if isinstance(item, str):
            pattern, sep, t = item.partition("=")
            if not sep:
                _bad_text("tensor_types", item, "malformed: expected PATTERN=TYPE")
            out.append((_text(pattern, "a tensor_types pattern"), _text(t, "a tensor_types type")))
            continue
        if not isinstance(item, tuple) or len(item) != 2:
            raise TypeError("an item of tensor_types must be a 'PATTERN=TYPE' string or a (pattern, type) pair")
        pattern, t = item
        out.append((_text(pattern, "a tensor_types pattern"), _type_text(t, "a tensor_types type")))
    return out


def _type_text(t: Any, what: str) -> bytes:
    """A ggml tensor type given as a TensorType or a name."""
    if isinstance(t, TensorType):
        return t.name.lower().encode()
    return _text(t, what)


def _bad_text(option: str, value: str, why: str) -> NoReturn:
    from .errors import RequestError

    raise RequestError(f"value is not valid: {option}: {value!r}: {why}", code="bad_value_text", section="access",
                       detail=f"{option}: {value!r}: {why}", exit_code=2)


def quantize(input: PathLike, output: PathLike, type: str, *,
             threads: int = 0,
             imatrix: Optional[PathLike] = None,
             include_weights: Iterable[str] = (),
             exclude_weights: Iterable[str] = (),
             output_tensor_type: Union[str, TensorType, None] = None,
             token_embedding_type: Union[str, TensorType, None] = None,
             tensor_types: Union[Mapping[str, Union[str, TensorType]], Iterable[Union[str, Tuple[str, Union[str, TensorType]]]]] = (),
             leave_output_tensor: bool = False,
             pure: bool = False,
             allow_requantize: bool = False,
             override_kv: Iterable[str] = (),
             keep_split: bool = False,
             dry_run: bool = False,
             split_max_size: Union[int, str, None] = None,
             split_max_tensors: Optional[int] = None,
             overwrite: bool = False,
             allow_type_change: bool = False,
             progress: Optional[Callable[[int, int], object]] = None) -> QuantizeResult:
    """Quantize a model (``minfer quantize``): the file llama.cpp's ``llama-quantize INPUT OUTPUT TYPE``
    writes for the same options, byte for byte, through the same library call as the command.

    ``input``: a GGUF file or part 1 of a split set. ``type``: llama-quantize's TYPE in any case
    (``"Q4_K_M"``, ``"q8_0"``, ``"IQ4_XS"``, ``"F16"``, ``"COPY"``, or a file-type number ``"15"``).
    The options are llama-quantize's, with the same meaning:

    - ``imatrix``: an importance matrix (GGUF or legacy ``.dat``); ``include_weights`` /
      ``exclude_weights``: keep only / drop the entries of these tensor names (not both).
    - ``output_tensor_type``, ``token_embedding_type``: a ggml type (``"q8_0"``, ``TensorType.Q6_K``)
      for ``output.weight`` / ``token_embd.weight``.
    - ``tensor_types``: ``--tensor-type`` overrides, in order, the first match deciding: ``{"attn_v":
      "q8_0"}``, ``["ffn_down=q6_k"]`` or ``[("ffn_.*", TensorType.Q5_K)]``; a pattern is a regular
      expression searched in the tensor name (lowercased first, as llama-quantize does).
    - ``leave_output_tensor``, ``pure``, ``allow_requantize`` (a quantized input is converted
      exactly to f32 first), ``keep_split`` (one output part per input part, named
      ``<output without .gguf>-00001-of-0000N.gguf``).
    - ``override_kv``: ``"KEY=TYPE:VALUE"`` texts (``"general.name=str:tiny"``, ``int``, ``float``,
      ``bool``, ``str``), written as llama-quantize writes them, by :func:`edit`'s rules: no
      ``split.*`` key, and a key llama.cpp reads keeps its type unless ``allow_type_change=True``.
    - ``dry_run``: plan and size everything, write nothing: ``outputs`` and ``file_size`` are the
      sizes the write would give, exactly.

    Beyond llama-quantize: ``split_max_size`` (bytes or a size text such as ``"2G"``, as
    :func:`split`) or ``split_max_tensors`` write a split set in the same pass; ``overwrite``
    replaces existing outputs (never the input, a directory or a special file); ``threads`` (0: one
    per hardware thread; the bytes do not depend on it).

    ``progress(done, total)``: bytes written so far and in all; called with the GIL held, from the
    library's writing thread. If it raises (a ``KeyboardInterrupt`` in a progress bar), the run stops
    there and the exception is raised: no output has been named yet, so every existing output, with
    ``overwrite=True`` too, is as it was.

    The work runs without the GIL. Returns a :class:`QuantizeResult`. Raises RequestError
    (``bad_value_text`` for a TYPE, type name or override text that does not read, exit_code 2;
    ``requantize_refused``; ``importance_required``; ``imatrix_mismatch``; ``non_finite_weight``;
    ``type_not_convertible``; ``quantize_failed`` for a weight beyond what the type holds (llama.cpp
    refuses it too); ``row_too_long``; ``usage`` for an output that exists without ``overwrite``;
    ``bad_value_text`` for include_weights with exclude_weights or without an imatrix, keep_split
    with a split limit, an override of a ``split.*`` key or of a key llama.cpp reads as another type),
    InvalidFileError (the input, the imatrix: ``bad_imatrix``, ``truncated``; ``not_block_multiple``;
    ``bad_n_dims`` for a 4-D tensor to convert), GGUFIOError. A dry run checks everything but the
    outputs and the values, and only warns when an imatrix is needed and none is given. On any
    error no output exists that did not exist before."""
    if not isinstance(type, str):
        raise TypeError(f"type must be a str such as 'Q4_K_M', not {builtins.type(type).__name__}")
    out_type = None if output_tensor_type is None else _type_text(output_tensor_type, "output_tensor_type")
    embd_type = None if token_embedding_type is None else _type_text(token_embedding_type, "token_embedding_type")
    im = None if imatrix is None else _path(imatrix, "imatrix")
    max_bytes = None if split_max_size is None else parse_size(split_max_size, "split_max_size")
    max_tensors = None if split_max_tensors is None else _int(split_max_tensors, "split_max_tensors", 1)
    if progress is not None and not callable(progress):
        raise TypeError(f"progress must be a callable progress(done, total) or None, not {builtins.type(progress).__name__}")
    r = _toolbox.quantize(
        _path(input, "input"), _path(output, "output"), _text(type, "type"), _int(threads, "threads", 0, 2**32 - 1),
        im, _strings(include_weights, "include_weights"), _strings(exclude_weights, "exclude_weights"),
        out_type, embd_type, _tensor_types(tensor_types), _bool(leave_output_tensor, "leave_output_tensor"),
        _bool(pure, "pure"), _bool(allow_requantize, "allow_requantize"), _strings(override_kv, "override_kv"),
        _bool(keep_split, "keep_split"), _bool(dry_run, "dry_run"), max_bytes, max_tensors,
        _bool(overwrite, "overwrite"), _bool(allow_type_change, "allow_type_change"), progress)
    return QuantizeResult(**r)


# ---------------------------------------------------------------------------------------- prune

class PrunedTensor(TypedDict):
    name: str
    """Its name in the output (renumbered blocks: ``blk.1.*`` from ``blk.2.*``)."""
    source: str
    """Its name in the input."""
    type: TensorType
    shape: Tuple[int, ...]
    n_bytes: int
    sliced: bool
    """Experts were removed from it (the kept experts' slices, in order)."""


class PrunedKey(TypedDict):
    key: str
    before: Optional[str]
    """None: the key is new."""
    after: Optional[str]
    """None: the key goes."""


@dataclass
class PruneResult:
    """What :func:`prune` wrote (or, with ``dry_run``, would write)."""

    tensors: List[PrunedTensor]
    removed: List[str]
    """The input tensors left out, in input order."""
    metadata: List[PrunedKey]
    """The metadata changes, in the order they apply."""
    outputs: List[QuantizeOutput]
    warnings: List[str]
    blocks_before: int
    blocks_after: int
    experts_before: int
    experts_after: int
    input_tensor_bytes: int
    output_tensor_bytes: int
    file_size: int
    """The sum of the outputs' sizes: exact in a dry run too."""
    written: bool


def _index_list(v: Any, what: str) -> Optional[bytes]:
    """A list of layers or experts as the command's text: "3", "5-7", "0,2,30-31", or ints."""
    if v is None:
        return None
    if isinstance(v, (str, bytes)):
        return _text(v, what)
    if isinstance(v, int) and not isinstance(v, bool):
        v = [v]
    try:
        items = list(v)
    except TypeError:
        raise TypeError(f"{what} must be a str such as '0,2,5-7', an int or an iterable of ints, not {builtins.type(v).__name__}") from None
    for i in items:
        if isinstance(i, bool) or not isinstance(i, int):
            raise TypeError(f"{what} must hold ints, not {builtins.type(i).__name__}")
        if i < 0:
            raise ValueError(f"{what}: {i} is negative")
    return ",".join(str(i) for i in items).encode()


def prune(input: PathLike, output: PathLike, *,
          layers: Union[str, int, Iterable[int], None] = None,
          experts: Union[str, int, Iterable[int], None] = None,
          mtp: bool = False,
          only_mtp: bool = False,
          tensors: Optional[str] = None,
          provenance: bool = True,
          split_max_size: Union[int, str, None] = None,
          split_max_tensors: Optional[int] = None,
          dry_run: bool = False,
          overwrite: bool = False,
          progress: Optional[Callable[[int, int], object]] = None) -> PruneResult:
    """Remove layers, MoE experts, MTP layers or tensors from a model without requantizing
    (``minfer prune``), through the same library call as the command: every kept tensor's bytes
    unchanged, the metadata kept consistent (block and expert counts, per-layer arrays, leading
    dense and MTP counts), provenance recorded unless ``provenance=False``.

    ``layers`` / ``experts``: ``"0,2,5-7"``, an int, or ints. ``mtp``: remove the MTP layers and
    their key; ``only_mtp``: keep only them (renumbered from 0). ``tensors``: an ECMAScript regex; the tensors it finds in their names are removed.
    ``split_max_size`` / ``split_max_tensors``: write a split set. ``dry_run``: plan and size
    everything, write nothing. ``progress(done, total)`` as :func:`quantize`'s.

    Raises RequestError (``bad_selection``: a list that does not read, a layer or expert that does
    not exist, every one removed, nothing to remove, experts or MTP on a model without them, exit_code
    2; ``key_not_adjustable``; ``sources_incompatible``; ``bad_value_text`` for a regex that does not
    compile; ``usage`` for an output that exists without ``overwrite``), InvalidFileError (the
    input), GGUFIOError. On any error no output exists that did not exist before."""
    max_bytes = None if split_max_size is None else parse_size(split_max_size, "split_max_size")
    max_tensors = None if split_max_tensors is None else _int(split_max_tensors, "split_max_tensors", 1)
    if progress is not None and not callable(progress):
        raise TypeError(f"progress must be a callable progress(done, total) or None, not {builtins.type(progress).__name__}")
    r = _toolbox.prune(
        _path(input, "input"), _path(output, "output"), _index_list(layers, "layers"), _index_list(experts, "experts"),
        _bool(mtp, "mtp"), _bool(only_mtp, "only_mtp"), None if tensors is None else _text(tensors, "tensors"), _bool(provenance, "provenance"),
        max_bytes, max_tensors, _bool(dry_run, "dry_run"), _bool(overwrite, "overwrite"), progress)
    return PruneResult(**r)


# ---------------------------------------------------------------------------------------- assemble

class AssembledTensor(TypedDict):
    name: str
    model: str
    """The model its bytes come from, as the config names it ("(merged)" for a merged tensor)."""
    source: str
    type: TensorType
    shape: Tuple[int, ...]
    n_bytes: int
    by_rule: bool


@dataclass
class AssembleResult:
    """What :func:`assemble` wrote (or, with ``dry_run``, would write)."""

    method: str
    models: List[str]
    tensors: List[AssembledTensor]
    blocks: int
    metadata: List[Dict[str, str]]
    outputs: List[QuantizeOutput]
    output_tensor_bytes: int
    file_size: int
    warnings: List[str]
    written: bool
    #: What was fetched from models given as URLs: ``head_bytes``, ``tensor_bytes_planned`` (what a
    #: write fetches of their tensors), ``bytes`` (received, heads and tensors), ``requests``; all 0
    #: when every model is local.
    fetched: Dict[str, int]


def assemble(config: Union[PathLike, Mapping[str, Any]], output: PathLike, *,
             provenance: bool = True,
             imatrix: Optional[PathLike] = None,
             split_max_size: Union[int, str, None] = None,
             split_max_tensors: Optional[int] = None,
             dry_run: bool = False,
             overwrite: bool = False,
             progress: Optional[Callable[[int, int], object]] = None,
             max_fetch: Union[int, str, None] = None,
             timeout: Optional[float] = None) -> AssembleResult:
    """Build a model from a mergekit configuration (``minfer assemble``), through the same library
    call as the command. ``config``: a YAML/JSON file, or the config as a dict (mergekit's keys:
    ``merge_method``, ``slices``, ``models``, ``base_model``, ``parameters``, ...; minfer's
    ``tensors`` rules). passthrough stacks copy every byte from its source; linear, slerp,
    task_arithmetic and ties dequantize each tensor exactly, merge it as mergekit does and quantize it
    back to the base tensor's type (``imatrix``: an importance matrix for that re-quantization). See
    docs/ASSEMBLE_CONFIG.md.

    A model may be a URL (``http(s)://`` or ``hf://OWNER/REPO/FILE[@REVISION]``): its head is read as
    :func:`estimate` reads one, then only the byte ranges of the tensors the output takes are fetched.
    ``max_fetch``: the most bytes fetched over every remote model, heads and tensors (int or size text;
    default: 64 MiB for the heads, then exactly the tensors taken; a plan beyond it is refused before
    anything is written); ``timeout``: the whole command's seconds (default: 60 for the heads, then 60
    plus 1 per MiB of tensors). ``$HF_TOKEN`` is sent to the Hub only.

    Raises RequestError (``bad_config``, ``unsupported_config``: exit_code 2; ``sources_incompatible``;
    ``key_not_adjustable``; ``usage`` for an output that exists without ``overwrite``),
    InvalidFileError (a source), GGUFIOError. On any error no output exists that did not exist before."""
    import json
    if isinstance(config, Mapping):
        try:
            text: Optional[str] = json.dumps(config, allow_nan=False)
        except (TypeError, ValueError) as e:
            raise TypeError(f"config: the dict cannot be written as JSON: {e}") from None
        path = None
    else:
        text = None
        path = _path(config, "config")
    max_bytes = None if split_max_size is None else parse_size(split_max_size, "split_max_size")
    max_tensors = None if split_max_tensors is None else _int(split_max_tensors, "split_max_tensors", 1)
    if progress is not None and not callable(progress):
        raise TypeError(f"progress must be a callable progress(done, total) or None, not {builtins.type(progress).__name__}")
    im = None if imatrix is None else _path(imatrix, "imatrix")
    fetch = None if max_fetch is None else parse_size(max_fetch, "max_fetch")
    seconds = _timeout(timeout)
    r = _toolbox.assemble(path, text, _path(output, "output"), _bool(provenance, "provenance"), im, max_bytes, max_tensors,
                          _bool(dry_run, "dry_run"), _bool(overwrite, "overwrite"), progress, fetch, seconds)
    return AssembleResult(**r)


# ---------------------------------------------------------------------------------------- convert

class ConvertedTensor(TypedDict):
    name: str
    """Its name in the output (``blk.0.attn_q.weight``)."""
    source: Optional[str]
    """The checkpoint tensor it comes from (the first one, for stacked MoE experts); None for a
    tensor the converter computes (``rope_freqs.weight``)."""
    source_dtype: Optional[str]
    """That tensor's safetensors dtype (``"F32"``, ``"BF16"``, …); None with ``source``."""
    type: TensorType
    ne: Tuple[int, ...]
    """ggml's order: the fastest-varying dimension first."""
    bytes: int


@dataclass
class ConvertResult:
    """What :func:`convert` wrote (or, with ``dry_run``, would write): the keys of
    ``minfer convert --json``, plus ``file_size``."""

    written: bool
    architecture: str
    """The Hugging Face class (``"Qwen3ForCausalLM"``)."""
    gguf_architecture: str
    """``general.architecture`` (``"qwen3"``)."""
    file_type: str
    """``"F32"``, ``"F16"``, ``"BF16"``, ``"Q8_0"``, or the llama-quantize type (``"Q4_K_M"``)."""
    input_tensor_bytes: int
    """The checkpoint's tensor bytes."""
    output_tensor_bytes: int
    outputs: List[QuantizeOutput]
    tensors: List[ConvertedTensor]
    warnings: List[str]
    file_size: int
    """The sum of the outputs' sizes: exact in a dry run too."""
    #: What was fetched from a checkpoint given as a URL: ``head_bytes`` (its small files and
    #: headers), ``tensor_bytes_planned``, ``bytes``, ``requests`` (all 0 for a directory).
    fetched: Dict[str, int]


def convert(model: PathLike, outfile: PathLike, *,
            outtype: str = "auto",
            model_name: Optional[str] = None,
            pre: Optional[str] = None,
            vocab_only: bool = False,
            imatrix: Optional[PathLike] = None,
            split_max_size: Union[int, str, None] = None,
            split_max_tensors: Optional[int] = None,
            threads: int = 0,
            dry_run: bool = False,
            overwrite: bool = False,
            progress: Optional[Callable[[int, int], object]] = None,
            max_fetch: Union[int, str, None] = None,
            timeout: Optional[float] = None) -> ConvertResult:
    """Convert a Hugging Face safetensors checkpoint to GGUF (``minfer convert``), through the same
    library call as the command: the file llama.cpp's ``convert_hf_to_gguf.py`` writes with the same
    options, byte for byte (Llama with SentencePiece or BPE tokenizers, Mistral-style Llama
    checkpoints, Qwen2, Qwen3, Qwen3-MoE; docs/CLI.md), streamed in bounded memory.

    ``model``: the checkpoint directory (``config.json``, ``model.safetensors`` or its shards with
    ``model.safetensors.index.json``, ``tokenizer.model`` and/or ``tokenizer.json``,
    ``tokenizer_config.json``), or its URL (``http(s)://…/``, ``hf://OWNER/REPO[@REVISION]``: read
    with range requests, each byte needed fetched once; ``$HF_TOKEN`` is sent to the Hub only). ``outfile``: the GGUF file (with a split limit, the set's prefix:
    ``<outfile without .gguf>-00001-of-0000N.gguf``). The options are the reference's, with underscores:

    - ``outtype``: ``"f32"``, ``"f16"``, ``"bf16"``, ``"q8_0"`` or ``"auto"`` (BF16 stays BF16, else
      F16), as the reference (lower case, as it spells them); or a llama-quantize type (``"Q4_K_M"``,
      ``"IQ4_XS"``; ``"F16"`` in upper case is llama-quantize's): the file llama-quantize writes from the
      reference's f32 output, in one pass without that file.
    - ``model_name``: ``general.name`` (default: from the model card or the directory's name).
    - ``pre``: the BPE pre-tokenizer (``tokenizer.ggml.pre``, e.g. ``"llama-bpe"``, ``"qwen2"``)
      when the hash of the tokenizer's check text is not a known one (refused otherwise, never
      guessed).
    - ``vocab_only``: the metadata and vocabulary only, no tensors.
    - ``imatrix``: an importance matrix for a llama-quantize ``outtype`` that needs one.
    - ``split_max_size`` (bytes or a size text such as ``"2G"``, as :func:`split`) /
      ``split_max_tensors``: write a split set in the same pass.
    - ``threads``: quantizing threads (0: one per hardware thread; the bytes do not depend on it).
    - ``dry_run``: plan and size everything, write nothing; ``outputs`` and ``file_size`` are the
      sizes the write would give, exactly.
    - ``overwrite``: replace an existing output (never one of the checkpoint's files).
    - ``max_fetch`` / ``timeout``: for a URL, as :func:`assemble`'s (default: the checkpoint itself —
      its small files, headers and the tensor bytes the plan reads, checked before any tensor byte
      is asked; the whole call's seconds).

    ``progress(done, total)`` as :func:`quantize`'s: bytes written, called with the GIL held; an
    exception it raises stops the run and is raised, nothing written. The work runs without the GIL.

    Returns a :class:`ConvertResult`. Raises InvalidFileError for a checkpoint that is not what it
    says (``bad_model_config``: a missing or malformed ``config.json``; ``no_weights``;
    ``bad_safetensors``; ``bad_checkpoint_index``; ``bad_tokenizer``; ``bad_tensor``;
    ``bad_model_card``; exit_code 1), RequestError for one the converter does not handle
    (``unsupported_architecture``, ``unsupported_dtype``, ``unsupported_tokenizer``: exit_code 1),
    for a request it refuses (``bad_value_text``: an ``outtype`` that is neither the reference's nor
    a llama-quantize type, an ``imatrix`` with a reference outtype; exit_code 2; ``usage``: an output
    that exists without ``overwrite``, or that is one of the checkpoint's files) and the quantizer's
    (``importance_required`` …), GGUFIOError. On any error no output exists that did not exist before."""
    if not isinstance(outtype, str):
        raise TypeError(f"outtype must be a str such as 'f16' or 'Q4_K_M', not {builtins.type(outtype).__name__}")
    im = None if imatrix is None else _path(imatrix, "imatrix")
    max_bytes = None if split_max_size is None else parse_size(split_max_size, "split_max_size")
    max_tensors = None if split_max_tensors is None else _int(split_max_tensors, "split_max_tensors", 1)
    if progress is not None and not callable(progress):
        raise TypeError(f"progress must be a callable progress(done, total) or None, not {builtins.type(progress).__name__}")
    r = _toolbox.convert(
        _path(model, "model"), _path(outfile, "outfile"), _text(outtype, "outtype"),
        None if model_name is None else _text(model_name, "model_name"), None if pre is None else _text(pre, "pre"),
        _bool(vocab_only, "vocab_only"), im, max_bytes, max_tensors, _int(threads, "threads", 0, 2**32 - 1),
        _bool(dry_run, "dry_run"), _bool(overwrite, "overwrite"), progress,
        None if max_fetch is None else parse_size(max_fetch, "max_fetch"), _timeout(timeout))
    return ConvertResult(**r)


# ------------------------------------------------------------------------------------------- report

def report(models: Union[PathLike, Sequence[PathLike]], output: Optional[PathLike] = None, *,
           values: bool = False,
           imatrix: Optional[PathLike] = None,
           overwrite: bool = False,
           max_fetch: Union[int, str, None] = None,
           timeout: Optional[float] = None,
           progress: Optional[Callable[[int, int], object]] = None) -> Dict[str, Any]:
    """A picture of a model (``minfer report``), through the same library calls as the command.
    ``models``: one model (a path, part 1 of a split set, or a URL), or two ``[A, B]``: B compared
    with the reference A tensor by tensor (RMSE, NMSE, cosine, max |a-b|, relative error; with
    ``imatrix`` the importance-weighted RMSE). ``values``: every tensor's statistics and histogram.
    ``output``: the HTML page to write (atomically; ``overwrite`` to replace it). Returns the report
    document (docs/REPORT_JSON.md) as a dict, with ``"fetched"`` added (what was fetched from URLs).
    A URL is read by its head; its values, or a comparison with it, need ``max_fetch`` (bytes or size
    text) holding every tensor read. Raises RequestError (usage: exit_code 2), InvalidFileError,
    GGUFIOError."""
    import json
    if isinstance(models, (str, bytes, os.PathLike)):
        names = [models]
    else:
        names = list(models)
    if not 1 <= len(names) <= 2:
        _usage(f"report takes one model or two (the reference first), not {len(names)}")
    paths = [_path(m, "models") for m in names]
    if progress is not None and not callable(progress):
        raise TypeError(f"progress must be a callable progress(done, total) or None, not {builtins.type(progress).__name__}")
    if imatrix is not None and len(paths) != 2:
        _usage("imatrix weighs the error of a comparison: give two models (the reference first)")
    im = None if imatrix is None else _path(imatrix, "imatrix")
    out = None if output is None else _path(output, "output")
    fetch = None if max_fetch is None else parse_size(max_fetch, "max_fetch")
    text, fetched = _toolbox.report(paths, _bool(values, "values"), im, out, _bool(overwrite, "overwrite"), fetch,
                                    _timeout(timeout), progress)
    doc = json.loads(text)
    doc["fetched"] = fetched
    return cast(Dict[str, Any], doc)
