"""Type stubs of minfer._toolbox (python/src/toolbox_*.cpp): the minfer tool's commands over the C++
libraries, taking plain values (paths and texts as bytes or str) and returning dicts. Use the
documented wrappers in minfer.toolbox, which check and convert the arguments."""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

_Text = Union[str, bytes]

def edit(
    path: _Text,
    output: _Text,
    changes: Sequence[Tuple[str, _Text, _Text, _Text]],
    reserve: int,
    in_place: bool,
    dry_run: bool,
    overwrite: bool,
    allow_type_change: bool,
) -> Dict[str, Any]:
    """changes: (op, key, type name, text) in order; op one of "text" (a KEY[:TYPE]=VALUE text),
    "set", "set_typed", "delete", "chat_template", "special_token", "name", "description".
    output b"": none. Returns the fields of minfer.toolbox.EditResult (diff entries as dicts)."""

def edit_recover(path: _Text) -> str:
    """"nothing_to_do", "rolled_back" or "completed"."""

def edit_discard_journal(path: _Text) -> bool:
    """Whether there was an undo journal (it is removed)."""

def split(
    path: _Text,
    prefix: _Text,
    max_tensors: Optional[int],
    max_bytes: Optional[int],
    no_tensor_first_split: bool,
    dry_run: bool,
    overwrite: bool,
) -> Dict[str, Any]:
    """The fields of minfer.toolbox.SplitResult (parts as dicts)."""

def merge(path: _Text, output: _Text, dry_run: bool, overwrite: bool) -> Dict[str, Any]:
    """The fields of minfer.toolbox.MergeResult (warnings as dicts)."""

def hash(
    path: _Text,
    kinds: List[str],
    per_tensor: bool,
    manifest: Optional[_Text],
    file_sha256: bool,
    expect: List[str],
    threads: int,
) -> Dict[str, Any]:
    """kinds: "xxh64", "xxh3", "sha1", "sha256", "uuid" (empty: xxh64, or the manifest's
    strongest). The fields of minfer.toolbox.HashResult."""

def verify(
    path: _Text,
    values: bool,
    max_examples: int,
    threads: int,
    manifest: Optional[_Text],
    file_sha256: List[str],
    mmap: bool,
) -> Dict[str, Any]:
    """minfer verify --json's document."""

def diff(a: _Text, b: _Text, values: bool, mmap: bool) -> Dict[str, Any]:
    """minfer diff --json's document."""

def estimate(
    location: _Text,
    ctx: Optional[int],
    batch: int,
    ubatch: int,
    cache_type_k: str,
    cache_type_v: str,
    parallel: int,
    flash_attn: str,
    max_fetch: Optional[int],
    timeout: Optional[float],
) -> Dict[str, Any]:
    """minfer estimate --json's document."""

def parse_size(text: str) -> Tuple[Optional[int], Optional[str]]:
    """A SIZE read as the minfer tool reads it: (bytes, None), or (None, why it is not one)."""

def quantize_rows(
    values: npt.NDArray[np.float32], type: Union[int, str], importance: Optional[npt.NDArray[np.float32]], threads: int
) -> npt.NDArray[np.uint8]:
    """values: float32 C-contiguous, 1-D or 2-D; importance None or n_per_row float32. uint8 rows
    (minfer.quant.quantize checks and converts the arguments)."""

def tensor_type_id(name: str) -> int:
    """A ggml type name in any case as its id; RequestError bad_value_text for an unknown name."""

def can_quantize(type: int) -> bool: ...
def requires_importance(type: int) -> bool: ...

def quantize(
    input: _Text,
    output: _Text,
    type: _Text,
    threads: int,
    imatrix: Optional[_Text],
    include_weights: Sequence[_Text],
    exclude_weights: Sequence[_Text],
    output_tensor_type: Optional[_Text],
    token_embedding_type: Optional[_Text],
    tensor_types: Sequence[Tuple[_Text, _Text]],
    leave_output_tensor: bool,
    pure: bool,
    allow_requantize: bool,
    override_kv: Sequence[_Text],
    keep_split: bool,
    dry_run: bool,
    split_max_bytes: Optional[int],
    split_max_tensors: Optional[int],
    overwrite: bool,
    allow_type_change: bool,
    progress: Optional[Callable[[int, int], object]],
) -> Dict[str, Any]:
    """The fields of minfer.toolbox.QuantizeResult (plan entries and outputs as dicts). tensor_types:
    (pattern, ggml type name) pairs; override_kv: "KEY=TYPE:VALUE" texts."""

def prune(
    input: _Text,
    output: _Text,
    layers: Optional[_Text],
    experts: Optional[_Text],
    mtp: bool,
    only_mtp: bool,
    tensors: Optional[_Text],
    provenance: bool,
    split_max_bytes: Optional[int],
    split_max_tensors: Optional[int],
    dry_run: bool,
    overwrite: bool,
    progress: Optional[Callable[[int, int], object]],
) -> Dict[str, Any]: ...

def assemble(
    config_path: Optional[_Text],
    config_text: Optional[str],
    output: _Text,
    provenance: bool,
    imatrix: Optional[_Text],
    split_max_bytes: Optional[int],
    split_max_tensors: Optional[int],
    dry_run: bool,
    overwrite: bool,
    progress: Optional[Callable[[int, int], object]],
    max_fetch: Optional[int],
    timeout: Optional[float],
) -> Dict[str, Any]: ...

def convert(
    model: _Text,
    outfile: _Text,
    outtype: _Text,
    model_name: Optional[_Text],
    pre: Optional[_Text],
    vocab_only: bool,
    imatrix: Optional[_Text],
    split_max_bytes: Optional[int],
    split_max_tensors: Optional[int],
    threads: int,
    dry_run: bool,
    overwrite: bool,
    progress: Optional[Callable[[int, int], object]],
    max_fetch: Optional[int],
    timeout: Optional[float],
) -> Dict[str, Any]:
    """The fields of minfer.toolbox.ConvertResult (tensors and outputs as dicts)."""

def report(
    models: List[_Text],
    values: bool,
    imatrix: Optional[_Text],
    output: Optional[_Text],
    overwrite: bool,
    max_fetch: Optional[int],
    timeout: Optional[float],
    progress: Optional[Callable[[int, int], object]],
) -> Tuple[str, Dict[str, int]]: ...
