"""gguf-py's ``GGUFReader`` on minfer: the same attributes, the same numpy views, the same values.

The file is opened and verified by minfer's C++ loader (minfer._core.open: every check of
``minfer info``); the reader then hands out what gguf-py hands out, as numpy views of the file's
bytes: ``reader.data`` is the whole file (a zero-copy view of minfer's mapping in mode 'r', an
np.memmap in modes 'r+' and 'c', as gguf-py), each field's ``parts`` are views into it placed at
the offsets minfer reports, each tensor's ``data`` is its bytes viewed and shaped as gguf-py does.

Where gguf-py builds every part of every field when the file is opened (a 150,000-token vocabulary
becomes 300,000 small arrays), this reader builds a field's parts the first time they are asked
for, and ``ReaderField.contents()`` reads arrays straight from minfer without building them. The
values are the same either way.

Differences from gguf-py, all on files gguf-py would read differently or not at all: minfer
refuses every invalid file (InvalidFileError, a ValueError, as gguf-py's own refusals); a key or
tensor name that is not UTF-8 is kept with its bytes escaped (surrogateescape) where gguf-py
fails to open the file; big-endian files are refused; part 1 of a split set needs its other parts
beside it (the reader then shows part 1's metadata and tensors only, as gguf-py would).
"""

from __future__ import annotations

import logging
import os
from collections import OrderedDict
from typing import Any, Dict, Iterator, List, Literal, NamedTuple, Optional, Tuple, Union

import numpy as np
import numpy.typing as npt

from .. import _core
from .constants import GGML_QUANT_SIZES, GGUF_DEFAULT_ALIGNMENT, GGMLQuantizationType, GGUFEndian, GGUFValueType
from .quants import quant_shape_to_byte_shape

__all__ = ["GGUFReader", "ReaderField", "ReaderTensor"]

logger = logging.getLogger(__name__)

_U32 = np.dtype(np.uint32)
_U64 = np.dtype(np.uint64)

# numpy type of each scalar value type (gguf-py's table; BOOL is numpy's bool).
_SCALAR_NP: Dict[GGUFValueType, type] = {
    GGUFValueType.UINT8: np.uint8,
    GGUFValueType.INT8: np.int8,
    GGUFValueType.UINT16: np.uint16,
    GGUFValueType.INT16: np.int16,
    GGUFValueType.UINT32: np.uint32,
    GGUFValueType.INT32: np.int32,
    GGUFValueType.FLOAT32: np.float32,
    GGUFValueType.UINT64: np.uint64,
    GGUFValueType.INT64: np.int64,
    GGUFValueType.FLOAT64: np.float64,
    GGUFValueType.BOOL: np.bool_,
}
_SCALAR_SIZE = {t: np.dtype(d).itemsize for t, d in _SCALAR_NP.items()}

# Tensor types whose data gguf-py gives as values (every other type: uint8 rows of block bytes).
_TENSOR_NP = {
    GGMLQuantizationType.F16: np.float16,
    GGMLQuantizationType.F32: np.float32,
    GGMLQuantizationType.F64: np.float64,
    GGMLQuantizationType.I8: np.int8,
    GGMLQuantizationType.I16: np.int16,
    GGMLQuantizationType.I32: np.int32,
    GGMLQuantizationType.I64: np.int64,
}

_MODES = {"r": "r", "readonly": "r", "r+": "r+", "readwrite": "r+", "c": "c", "copyonwrite": "c"}


def _to_string(part: np.ndarray) -> str:
    return str(part.tobytes(), encoding="utf-8")


def _strict(s: str) -> str:
    """A string from minfer (undecodable bytes escaped) as gguf-py decodes it: strict UTF-8."""
    if not s.isascii():
        try:
            s.encode("utf-8")
        except UnicodeEncodeError:
            # gguf-py's str(bytes, 'utf-8') raises UnicodeDecodeError: the same, from the same bytes
            s.encode("utf-8", "surrogateescape").decode("utf-8")
    return s


class ReaderField:
    """One field (a metadata entry, a header count, or a tensor's table record) as gguf-py's
    ReaderField: ``offset``, ``name``, ``parts`` (numpy views: key length, key bytes, type tag,
    then the value's parts), ``data`` (indices of the value parts), ``types``, ``contents()``.

    Built like gguf-py's NamedTuple (``ReaderField(offset, name, parts, data, types)``) and
    unpacks like it; the parts of a metadata entry are built on first use."""

    __slots__ = ("offset", "name", "_parts", "_data", "_types", "_build", "_fast")
    _fields = ("offset", "name", "parts", "data", "types")

    def __init__(self, offset: int, name: str, parts: Optional[List[npt.NDArray[Any]]] = None,
                 data: Optional[List[int]] = None, types: Optional[List[GGUFValueType]] = None) -> None:
        self.offset = offset
        self.name = name
        self._parts = [] if parts is None else parts
        self._data = [-1] if data is None else data
        self._types = [] if types is None else types
        self._build = None
        self._fast = None

    @classmethod
    def _lazy(cls, offset: int, name: str, types: List[GGUFValueType], build: Any, fast: Any = None) -> "ReaderField":
        f = cls(offset, name, None, None, types)
        f._build = build
        f._fast = fast
        return f

    def _materialize(self) -> None:
        if self._build is not None:
            self._parts, self._data = self._build()
            self._build = None
            self._fast = None

    @property
    def parts(self) -> List[npt.NDArray[Any]]:
        self._materialize()
        return self._parts

    @property
    def data(self) -> List[int]:
        self._materialize()
        return self._data

    @property
    def types(self) -> List[GGUFValueType]:
        return self._types

    def contents(self, index_or_slice: Union[int, slice] = slice(None)) -> Any:
        """The value: a scalar, a str, or for an array the item at an index or the list of the items
        of a slice (gguf-py's ReaderField.contents)."""
        if not self._types:
            return None
        if self._fast is not None and self._build is not None:
            return self._fast(index_or_slice)
        main_type = self._types[0]
        if main_type == GGUFValueType.ARRAY:
            sub_type = self._types[-1]
            if sub_type == GGUFValueType.STRING:
                indices = self.data[index_or_slice]
                if isinstance(index_or_slice, int):
                    return _to_string(self.parts[indices])  # type: ignore[index]
                return [_to_string(self.parts[i]) for i in indices]  # type: ignore[union-attr]
            if isinstance(index_or_slice, int):
                return self.parts[self.data[index_or_slice]].tolist()[0]
            return [v for i in self.data[index_or_slice] for v in self.parts[i].tolist()]  # type: ignore[union-attr]
        if main_type == GGUFValueType.STRING:
            return _to_string(self.parts[-1])
        return self.parts[-1].tolist()[0]

    # NamedTuple behaviour
    def __iter__(self) -> Iterator[Any]:
        return iter((self.offset, self.name, self.parts, self.data, self.types))

    def __len__(self) -> int:
        return 5

    def __getitem__(self, i: Union[int, slice]) -> Any:
        return (self.offset, self.name, self.parts, self.data, self.types)[i]

    def _asdict(self) -> Dict[str, Any]:
        return dict(zip(self._fields, self))

    def _replace(self, **changes: Any) -> "ReaderField":
        d = self._asdict()
        d.update(changes)
        return ReaderField(**d)

    def __repr__(self) -> str:
        types = ", ".join(t.name for t in self._types)
        return f"ReaderField(offset={self.offset}, name={self.name!r}, types=[{types}])"


class ReaderTensor(NamedTuple):
    """One tensor as gguf-py's ReaderTensor."""

    name: str
    tensor_type: GGMLQuantizationType
    shape: npt.NDArray[np.uint64]
    """Elements per dimension in ggml order (fastest first): a view of the table's dims."""
    n_elements: int
    n_bytes: int
    data_offset: int
    """Absolute offset of the tensor's bytes in the file."""
    data: npt.NDArray[Any]
    field: ReaderField


def _whole_file(model: Any, path: str) -> np.ndarray:
    """Part 1's bytes, read-only: minfer's own zero-copy view of its mapping (Part.data). A remote
    model holds only the file's head: gguf-py reads whole local files, and so does this."""
    part = model.parts[0]
    if not part.complete:
        raise ValueError(f"gguf_compat: {path!r}: only the head of a remote file is held; "
                         "GGUFReader reads local files (use minfer.open for a URL)")
    return part.data


def _pad(n: int, a: int) -> int:
    return (n + a - 1) // a * a


class GGUFReader:
    """A GGUF file as gguf-py's GGUFReader: ``fields`` (OrderedDict name -> ReaderField: the
    header's GGUF.version, GGUF.tensor_count, GGUF.kv_count, then every metadata entry in file
    order), ``tensors`` (list of ReaderTensor), ``get_field``, ``get_tensor``, ``alignment``,
    ``data_offset``, ``byte_order``, ``endianess``, ``data`` (the whole file, uint8).

    ``mode``: 'r' (read-only views of minfer's mapping), 'r+' (views of a writable np.memmap: a
    value written into a part changes the file, as with gguf-py) or 'c' (copy on write)."""

    # I - same as host, S - swapped (minfer reads little-endian files only)
    byte_order: Literal["I", "S"] = "I"
    alignment: int = GGUF_DEFAULT_ALIGNMENT
    data_offset: int

    # gguf-py's internal table, kept for code that reads it
    gguf_scalar_to_np: Dict[GGUFValueType, type] = dict(_SCALAR_NP)

    def __init__(self, path: Union[os.PathLike, str], mode: Literal["r", "r+", "c"] = "r") -> None:
        if mode not in _MODES:
            raise ValueError(f"mode must be one of 'r', 'r+', 'c' (got {mode!r})")
        path = os.fspath(path)
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        if "://" in path:
            raise ValueError(f"GGUFReader reads a local file, not a URL: {path}")
        os.stat(path)  # FileNotFoundError / PermissionError as gguf-py's np.memmap gives them
        self._model = _core.open(path)
        part = self._model.parts[0]
        np_mode = _MODES[mode]
        self.data: np.ndarray = _whole_file(self._model, path) if np_mode == "r" else np.memmap(path, mode=np_mode)  # type: ignore[call-overload]
        self._mode = np_mode
        self.endianess = GGUFEndian.LITTLE
        self.alignment = int(part.alignment)
        # gguf-py pads the end of the tensor table even when there are no tensors; minfer's data
        # section then starts at the table's end (as llama.cpp's)
        self.data_offset = int(part.data_offset) if part.n_tensors else _pad(int(part.data_offset), self.alignment)
        self.fields: "OrderedDict[str, ReaderField]" = OrderedDict()
        self._tensors: Optional[List[ReaderTensor]] = None
        self._build_header_fields()
        self._metadata_end = self._build_fields()

    # gguf-py's API
    def get_field(self, key: str) -> Union[ReaderField, None]:
        """The field of `key`, None when absent."""
        return self.fields.get(key, None)

    def get_tensor(self, idx: int) -> ReaderTensor:
        """Tensor `idx` in file order."""
        return self.tensors[idx]

    @property
    def tensors(self) -> List[ReaderTensor]:
        if self._tensors is None:
            self._tensors = self._build_tensors()
        return self._tensors

    @tensors.setter
    def tensors(self, value: List[ReaderTensor]) -> None:
        self._tensors = value

    # building
    def _view(self, offset: int, dtype: Any, count: int = 1) -> np.ndarray:
        dt = np.dtype(dtype)
        return self.data[offset:offset + dt.itemsize * count].view(dt)

    def _build_header_fields(self) -> None:
        version = self._view(4, _U32)
        counts = self._view(8, _U64, 2)
        self.fields["GGUF.version"] = ReaderField(4, "GGUF.version", [version], [0], [GGUFValueType.UINT32])
        self.fields["GGUF.tensor_count"] = ReaderField(8, "GGUF.tensor_count", [counts[:1]], [0], [GGUFValueType.UINT64])
        self.fields["GGUF.kv_count"] = ReaderField(16, "GGUF.kv_count", [counts[1:]], [0], [GGUFValueType.UINT64])

    def _build_fields(self) -> int:
        """A lazy field per metadata entry; returns the end of the metadata (absolute)."""
        md = self._model.metadata
        end = 24
        for key in md:
            raw = md.raw(key)
            vtype = GGUFValueType(int(raw.type))
            types = [vtype]
            if vtype == GGUFValueType.ARRAY and int(raw.count) > 0:
                # gguf-py takes the element type from the first item: none for an empty array
                types.append(GGUFValueType(int(raw.element_type)))  # type: ignore[arg-type]
            field = ReaderField._lazy(int(raw.offset), key, types, self._field_builder(raw), self._fast_contents(key, raw, types))
            if key in self.fields:  # a header pseudo-field's name used as a key
                raise KeyError(f"Duplicate {key} already in list at offset {raw.offset}")
            self.fields[key] = field
            end = int(raw.value_offset) + int(raw.data.size)
        return end

    def _field_builder(self, raw: Any) -> Any:
        offset = int(raw.offset)

        def build() -> Tuple[List[np.ndarray], List[int]]:
            klen = self._view(offset, _U64)
            n = int(klen[0])
            kdata = self._view(offset + 8, np.uint8, n)
            tag = self._view(offset + 8 + n, _U32)
            parts: List[np.ndarray] = [klen, kdata, tag]
            _size, vparts, idxs, _types = self._value_parts(offset + 12 + n, int(tag[0]))
            parts += vparts
            return parts, [i + 3 for i in idxs]

        return build

    def _value_parts(self, offs: int, raw_type: int) -> Tuple[int, List[np.ndarray], List[int], List[GGUFValueType]]:
        """One value's parts at `offs`, as gguf-py lays them out: (size, parts, data indices, types)."""
        gtype = GGUFValueType(raw_type)
        if gtype == GGUFValueType.STRING:
            slen = self._view(offs, _U64)
            n = int(slen[0])
            return 8 + n, [slen, self._view(offs + 8, np.uint8, n)], [1], [gtype]
        nptype = _SCALAR_NP.get(gtype)
        if nptype is not None:
            v = self._view(offs, nptype)
            return v.nbytes, [v], [0], [gtype]
        # an array
        itype = self._view(offs, _U32)
        alen = self._view(offs + 4, _U64)
        count = int(alen[0])
        et = int(itype[0])
        etype = GGUFValueType(et)
        parts: List[np.ndarray] = [itype, alen]
        types: List[GGUFValueType] = [gtype]
        pos = offs + 12
        if count == 0:
            return 12, parts, [], types
        elem_np = _SCALAR_NP.get(etype)
        if elem_np is not None:
            size = _SCALAR_SIZE[etype]
            items = self._view(pos, elem_np, count)
            parts += [items[i:i + 1] for i in range(count)]
            return 12 + size * count, parts, list(range(2, 2 + count)), types + [etype]
        if etype == GGUFValueType.STRING:
            buf = self.data
            mv = memoryview(buf) if buf.flags.c_contiguous else None  # type: ignore[arg-type]
            idxs = []
            for i in range(count):
                slen = buf[pos:pos + 8].view(_U64)
                n = int.from_bytes(mv[pos:pos + 8], "little") if mv is not None else int(slen[0])
                parts.append(slen)
                parts.append(buf[pos + 8:pos + 8 + n])
                idxs.append(3 + 2 * i)
                pos += 8 + n
            return pos - offs, parts, idxs, types + [etype]
        # nested arrays (refused by minfer, kept for completeness)
        idxs = []
        for i in range(count):
            size, cparts, cidxs, ctypes = self._value_parts(pos, et)
            if i == 0:
                types += ctypes
            base = len(parts)
            parts += cparts
            idxs += [j + base for j in cidxs]
            pos += size
        return pos - offs, parts, idxs, types

    def _fast_contents(self, key: str, raw: Any, types: List[GGUFValueType]) -> Any:
        """contents() of a one-level array read from minfer without building the parts; None for
        the other values (their parts are few and cheap)."""
        if len(types) != 2 or types[0] != GGUFValueType.ARRAY:
            return None
        etype = types[1]
        model = self._model
        if etype == GGUFValueType.STRING:
            held: List[Any] = []  # the StringArray, kept: its item index is built once

            def strings(index_or_slice: Union[int, slice] = slice(None)) -> Any:
                if not held:
                    held.append(model.metadata[key])
                items = held[0]
                if isinstance(index_or_slice, int):
                    return _strict(items[index_or_slice])
                if isinstance(index_or_slice, slice) and index_or_slice == slice(None):
                    values = items.to_list()
                else:
                    values = [items[i] for i in range(len(items))[index_or_slice]]
                joined = "".join(values)
                if not joined.isascii():
                    _strict(joined)
                return values
            return strings
        np_type = _SCALAR_NP.get(etype)
        if np_type is None:
            return None

        def numbers(index_or_slice: Union[int, slice] = slice(None)) -> Any:
            if self._mode != "r":  # writable views may have been written to: read the file's bytes
                items = self._view(int(raw.value_offset), np_type, int(raw.count))
            else:
                items = raw.data.view(np_type)
            if isinstance(index_or_slice, int):
                return items[index_or_slice].item()
            return items[index_or_slice].tolist()
        return numbers

    def _tensor_info_field(self, offs: int, name: str) -> Tuple[int, ReaderField]:
        name_len = self._view(offs, _U64)
        n = int(name_len[0])
        name_data = self._view(offs + 8, np.uint8, n)
        p = offs + 8 + n
        n_dims = self._view(p, _U32)
        nd = int(n_dims[0])
        dims = self._view(p + 4, _U64, nd)
        p += 4 + 8 * nd
        raw_dtype = self._view(p, _U32)
        offset_tensor = self._view(p + 4, _U64)
        field = ReaderField(offs, name, [name_len, name_data, n_dims, dims, raw_dtype, offset_tensor], [1, 3, 4, 5])
        return p + 12 - offs, field

    def _build_tensors(self) -> List[ReaderTensor]:
        tensors: List[ReaderTensor] = []
        offs = self._metadata_end
        for t in self._model.tensors.values():
            if t.part != 0:  # the other files of a split set: gguf-py reads one file
                continue
            offs = int(t.info_offset)
            size, field = self._tensor_info_field(offs, t.name)
            offs += size
            if bytes(field.parts[1]) != t.name.encode("utf-8", "surrogateescape"):
                raise RuntimeError(f"gguf_compat: the tensor table does not hold {t.name!r} where expected")
            ggml_type = GGMLQuantizationType(int(t.type))
            n_elems = int(t.n_elements)
            np_dims: Tuple[int, ...] = tuple(reversed(field.parts[3].tolist()))
            block_size, type_size = GGML_QUANT_SIZES[ggml_type]
            n_bytes = n_elems * type_size // block_size
            data_offs = int(t.offset)
            item_type = _TENSOR_NP.get(ggml_type)
            if item_type is None:
                item_type = np.uint8
                np_dims = quant_shape_to_byte_shape(np_dims, ggml_type)
            if self._mode == "r":
                raw = t.data
            else:
                raw = self.data[data_offs:data_offs + n_bytes]
            tensors.append(ReaderTensor(
                name=t.name,
                tensor_type=ggml_type,
                shape=field.parts[3],
                n_elements=n_elems,
                n_bytes=n_bytes,
                data_offset=data_offs,
                data=raw.view(item_type).reshape(np_dims),
                field=field,
            ))
        return tensors

    def __repr__(self) -> str:
        return f"<GGUFReader {self._model.path!r}: {len(self.fields)} fields>"
