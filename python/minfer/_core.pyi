"""Type stubs of minfer._core (python/src/core_*.cpp): opening a model and reading it."""

from __future__ import annotations

import os
from typing import Any, Iterator, List, Mapping, Optional, Sequence, Tuple, Union, overload

import numpy as np
import numpy.typing as npt

from .types import TensorType, ValueType

def open(
    path: Union[str, bytes, os.PathLike[str], os.PathLike[bytes]],
    *,
    mmap: bool = True,
    max_fetch: Optional[int] = None,
    timeout: Optional[float] = None,
) -> Model:
    """Open and verify a GGUF model: a file, part 1 of a split set (the other parts are found
    beside it by name), or a URL (``http://``, ``https://``, ``hf://OWNER/REPO/FILE[@REV]``: only
    the head is fetched, by range requests; tensor data is then not available).

    ``mmap=False`` reads the files into memory instead of mapping them (immune to a file shrinking
    while it is read). ``max_fetch`` (bytes, default 64 MiB) and ``timeout`` (seconds for the whole
    open, every request and retry included, default 60) apply to URLs only. Raises InvalidFileError, GGUFIOError (minfer.errors)."""

class Model:
    """A verified model. A context manager; close() releases it. Views taken from it (numpy arrays
    of metadata or tensor bytes) keep its mapping alive on their own, so they stay valid after
    close(); every other accessor of a closed model raises ValueError."""

    def __enter__(self) -> Model: ...
    def __exit__(self, *exc: object) -> None: ...
    def close(self) -> None: ...
    @property
    def closed(self) -> bool: ...
    @property
    def path(self) -> str:
        """Part 1's path (or URL), as given."""
    @property
    def parts(self) -> List[Part]:
        """The files of the model, part 1 first (one for a single file)."""
    @property
    def metadata(self) -> Metadata:
        """Part 1's metadata: key → value, in file order."""
    @property
    def tensors(self) -> TensorMap:
        """Every tensor of every part, in file order (part by part)."""
    @property
    def file_bytes(self) -> int:
        """The sum of the sizes of the part files."""
    @property
    def is_remote(self) -> bool: ...
    @property
    def fetched_bytes(self) -> int:
        """For a URL: the body bytes fetched to open it (0 for a local file)."""
    @property
    def requests(self) -> int:
        """For a URL: the HTTP requests made to open it (0 for a local file)."""

class Part:
    """One file of a model."""

    @property
    def path(self) -> str: ...
    @property
    def version(self) -> int: ...
    @property
    def alignment(self) -> int: ...
    @property
    def file_size(self) -> int: ...
    @property
    def data_offset(self) -> int:
        """Absolute offset of the data section."""
    @property
    def data_size(self) -> int: ...
    @property
    def n_kv(self) -> int: ...
    @property
    def n_tensors(self) -> int: ...
    @property
    def trailing_bytes(self) -> int:
        """Bytes after the padded end of the data section (information, not an error)."""
    @property
    def complete(self) -> bool:
        """False for a remote file, of which only the head was fetched."""
    @property
    def data(self) -> npt.NDArray[np.uint8]:
        """The whole file's bytes (a remote file's head), a read-only zero-copy view."""

class FileMapping:
    """The bytes of an opened model: the ``base`` of every numpy array that views them, keeping
    them mapped while any such array lives."""

    @property
    def path(self) -> str: ...

class Metadata(Mapping[str, Any]):
    """Part 1's metadata, read-only, in file order. Values: int (u8…i64), float (f32, f64), bool,
    str (undecodable bytes as lone surrogates: ``s.encode("utf-8", "surrogateescape")`` gives the
    bytes back), numeric arrays as read-only numpy arrays viewing the file (zero-copy), string
    arrays as StringArray. Keys are str (decoded the same way)."""

    def __getitem__(self, key: Union[str, bytes]) -> Any: ...
    def __len__(self) -> int: ...
    def __iter__(self) -> Iterator[str]: ...
    def __contains__(self, key: object) -> bool: ...
    def raw(self, key: Union[str, bytes]) -> RawValue:
        """The entry's type tag, count, offsets and payload bytes. KeyError when absent."""

class RawValue:
    @property
    def key(self) -> str: ...
    @property
    def type(self) -> ValueType: ...
    @property
    def element_type(self) -> Optional[ValueType]:
        """An array's element type; None for a scalar or a string."""
    @property
    def count(self) -> int:
        """1 for a scalar or a string; the element count of an array."""
    @property
    def offset(self) -> int:
        """Absolute offset of the entry (its key's length field) in part 1."""
    @property
    def value_offset(self) -> int:
        """Absolute offset of the payload: a scalar's bytes, a string's bytes (after its length),
        an array's first element (after its type and count)."""
    @property
    def data(self) -> npt.NDArray[np.uint8]:
        """The payload bytes, a read-only zero-copy view."""

class StringArray(Sequence[str]):
    """A string array of the metadata (a vocabulary): len() and iteration without an index,
    indexing in O(1) after one walk over the items (built on first use, 8 bytes per item)."""

    def __len__(self) -> int: ...
    @overload
    def __getitem__(self, i: int) -> str: ...
    @overload
    def __getitem__(self, i: slice) -> List[str]: ...
    def __iter__(self) -> Iterator[str]: ...
    def to_list(self) -> List[str]:
        """Every item, as one list (the fastest way to read them all)."""
    def bytes_at(self, i: int) -> bytes:
        """Item i's bytes exactly as stored."""

class TensorMap(Mapping[str, "Tensor"]):
    """Tensors by name (O(1)), iterated in file order; an int is a position in file order (as
    gguf-py's ``reader.tensors[i]``): IndexError when out of range, negative from the end."""

    @overload  # type: ignore[override]
    def __getitem__(self, name: Union[str, bytes]) -> Tensor: ...
    @overload
    def __getitem__(self, name: int) -> Tensor: ...
    def __len__(self) -> int: ...
    def __iter__(self) -> Iterator[str]: ...
    def __contains__(self, name: object) -> bool: ...

class Tensor:
    @property
    def name(self) -> str: ...
    @property
    def type(self) -> TensorType: ...
    @property
    def shape(self) -> Tuple[int, ...]:
        """Elements per dimension in ggml order (fastest first), n_dims entries."""
    @property
    def numpy_shape(self) -> Tuple[int, ...]:
        """The shape in row-major (numpy) order: shape reversed."""
    @property
    def n_dims(self) -> int: ...
    @property
    def n_elements(self) -> int: ...
    @property
    def n_bytes(self) -> int: ...
    @property
    def strides(self) -> Tuple[int, int, int, int]:
        """ggml's nb[0..3] in bytes."""
    @property
    def offset(self) -> int:
        """Absolute offset of the tensor's bytes in its part's file."""
    @property
    def data_offset(self) -> int:
        """The offset as stored: from the start of the data section."""
    @property
    def part(self) -> int:
        """0-based index of the part (model.parts) whose file holds the tensor."""
    @property
    def info_offset(self) -> int:
        """Absolute offset of the tensor's record in its part's tensor table."""
    @property
    def data(self) -> npt.NDArray[np.uint8]:
        """The tensor's bytes, a read-only zero-copy view of the file (1-D, n_bytes long).
        ValueError for a remote model (its data is not fetched)."""
    def to_numpy(self, dtype: npt.DTypeLike = np.float32, *, threads: int = 0,
                 out: Optional[npt.NDArray[np.float32]] = None) -> np.ndarray:
        """The values as a new array of numpy_shape, converted to f32 bit for bit as ggml does
        (then to `dtype`: float32, float64 or float16), on `threads` threads (0: as many as there
        are cores, for large tensors), without the GIL. RequestError type_not_convertible for a
        type without a conversion (q8_1, i64). ``out``: a float32, C-contiguous, writable array of
        n_elements values (any shape) to convert into and return, instead of a new array (reusing
        one buffer for many tensors spares the new pages' cost)."""

def dequantize(data: Any, type: Union[int, TensorType], *, threads: int = 0,
               out: Optional[npt.NDArray[np.float32]] = None) -> npt.NDArray[np.float32]:
    """Convert raw bytes (any buffer: bytes, a uint8 array, …) of `type` to f32, 1-D. The size must
    be a whole number of blocks. RequestError (type_not_convertible, buffer_size_mismatch). ``out``
    as for Tensor.to_numpy."""

def tensor_type_name(type: int) -> str:
    """ggml's name of a type id ("q4_K"); "unknown" outside the table."""

def type_block(type: int) -> Tuple[int, int]:
    """(values per block, bytes per block) of a type id; (0, 0) for a removed or unknown id."""

def can_dequantize(type: int) -> bool: ...

def active_isa() -> str:
    """The dequantization kernels in use ("avx2", "scalar")."""
