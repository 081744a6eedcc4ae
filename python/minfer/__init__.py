"""minfer: strict, zero-copy GGUF models from Python.

    import minfer
    with minfer.open("model.gguf") as model:
        print(model.metadata["general.architecture"])
        for name, t in model.tensors.items():
            print(name, t.type.name, t.shape)
        w = model.tensors["token_embd.weight"].to_numpy()

Every file is verified completely before anything is handed out (the C++ loader of the ``minfer``
tool); errors are minfer.errors' exceptions with the library's fields. The toolbox (edit, split,
merge, hash, verify, estimate, diff, quantize, prune, assemble, convert) has the ``minfer`` command's semantics;
``minfer.quant`` quantizes numpy arrays. See docs/PYTHON.md.
"""

from __future__ import annotations

from . import errors, quant, types
from ._core import (
    Metadata,
    Model,
    Part,
    RawValue,
    StringArray,
    Tensor,
    TensorMap,
    active_isa,
    can_dequantize,
    dequantize,
    open,
    tensor_type_name,
    type_block,
)
from .errors import GGUFError, GGUFIOError, InvalidFileError, RequestError
from .toolbox import assemble, convert, diff, report, edit, edit_discard_journal, edit_recover, estimate, hash, merge, prune, quantize, split, verify
from .types import TensorType, ValueType

__version__ = "0.2.0"

__all__ = [
    "open", "Model", "Part", "Metadata", "RawValue", "StringArray", "TensorMap", "Tensor",
    "dequantize", "tensor_type_name", "type_block", "can_dequantize", "active_isa",
    "edit", "edit_recover", "edit_discard_journal", "split", "merge", "hash", "verify", "estimate", "diff",
    "quantize", "prune", "assemble", "convert", "report",
    "GGUFError", "InvalidFileError", "RequestError", "GGUFIOError",
    "TensorType", "ValueType", "errors", "types", "quant",
]

# The C++ mappings behave as the collections.abc protocols say (keys/items/values/get, `in`).
import collections.abc as _abc

_abc.Mapping.register(Metadata)
_abc.Mapping.register(TensorMap)
_abc.Sequence.register(StringArray)
del _abc
