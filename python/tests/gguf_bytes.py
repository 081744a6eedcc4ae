"""A GGUF file written byte by byte in Python, independently of minfer's C++ writer: the tests'
own source of files with every value type, and of hostile files (any field can be given wrong)."""

from __future__ import annotations

import struct
from typing import Iterable, List, Optional, Sequence, Tuple, Union

# GGUF value type tags
U8, I8, U16, I16, U32, I32, F32, BOOL, STRING, ARRAY, U64, I64, F64 = range(13)
_FMT = {U8: "<B", I8: "<b", U16: "<H", I16: "<h", U32: "<I", I32: "<i", F32: "<f", BOOL: "<B",
        U64: "<Q", I64: "<q", F64: "<d"}
# ggml type id -> (values per block, bytes per block) for the types the tests write
BLOCKS = {0: (1, 4), 1: (1, 2), 2: (32, 18), 3: (32, 20), 6: (32, 22), 7: (32, 24), 8: (32, 34),
          10: (256, 84), 11: (256, 110), 12: (256, 144), 13: (256, 176), 14: (256, 210), 15: (256, 292),
          16: (256, 66), 17: (256, 74), 18: (256, 98), 19: (256, 50), 20: (32, 18), 21: (256, 110),
          22: (256, 82), 23: (256, 136), 24: (1, 1), 25: (1, 2), 26: (1, 4), 27: (1, 8), 28: (1, 8),
          29: (256, 56), 30: (1, 2), 34: (256, 54), 35: (256, 66), 39: (32, 17), 40: (64, 36),
          41: (128, 18), 42: (64, 18), 9: (32, 36)}


def gstr(s: Union[str, bytes]) -> bytes:
    b = s.encode() if isinstance(s, str) else s
    return struct.pack("<Q", len(b)) + b


def value(vtype: int, v) -> bytes:
    """The payload of one value (no type tag)."""
    if vtype == STRING:
        return gstr(v)
    if vtype == ARRAY:
        etype, items = v
        out = struct.pack("<IQ", etype, len(items))
        return out + b"".join(value(etype, x) for x in items)
    return struct.pack(_FMT[vtype], v)


def kv(key: Union[str, bytes], vtype: int, v) -> bytes:
    return gstr(key) + struct.pack("<I", vtype) + value(vtype, v)


def tensor_info(name: Union[str, bytes], shape: Sequence[int], ttype: int, offset: int) -> bytes:
    return gstr(name) + struct.pack("<I", len(shape)) + b"".join(struct.pack("<q", d) for d in shape) + \
        struct.pack("<IQ", ttype, offset)


def tensor_nbytes(shape: Sequence[int], ttype: int) -> int:
    elems, size = BLOCKS[ttype]
    n = 1
    for d in shape[1:]:
        n *= d
    return shape[0] // elems * size * n


def pad(n: int, a: int) -> int:
    return (n + a - 1) // a * a


def gguf(kvs: Iterable[Tuple[Union[str, bytes], int, object]] = (),
         tensors: Iterable[Tuple[str, Sequence[int], int, bytes]] = (),
         *, version: int = 3, alignment: int = 32, n_kv: Optional[int] = None,
         n_tensors: Optional[int] = None) -> bytes:
    """A whole file: header, metadata, tensor table, padding, data. `tensors` are
    (name, shape in ggml order, type id, bytes); the bytes are padded to `alignment`."""
    kvs = list(kvs)
    tensors = list(tensors)
    head = b"GGUF" + struct.pack("<IQQ", version, len(tensors) if n_tensors is None else n_tensors,
                                 len(kvs) if n_kv is None else n_kv)
    head += b"".join(kv(k, t, v) for k, t, v in kvs)
    offset = 0
    blobs: List[bytes] = []
    for name, shape, ttype, data in tensors:
        head += tensor_info(name, shape, ttype, offset)
        blobs.append(data + b"\0" * (pad(len(data), alignment) - len(data)))
        offset += len(blobs[-1])
    if tensors:
        head += b"\0" * (pad(len(head), alignment) - len(head))
    return head + b"".join(blobs)
