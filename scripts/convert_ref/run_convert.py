#!/usr/bin/python3
"""Run llama.cpp's convert_hf_to_gguf.py on Debian's Python packages (minfer's convert-ref harness).

scripts/convert-ref.sh copies this file to build/convert-ref/run_convert.py, beside llama.cpp/ (convert_hf_to_gguf.py,
conversion/, gguf-py/ extracted from a git mirror), stubs/transformers/ and hf_tokenizer.js. It takes the converter's
own arguments:

    /usr/bin/python3 build/convert-ref/run_convert.py MODEL_DIR --outfile OUT.gguf --outtype f16 --model-name NAME

Before running the converter as __main__ it
* puts stubs/ first on sys.path, so `transformers` is the stub (scripts/convert_ref/transformers/__init__.py);
* gives Debian's torch 1.13 the attributes the converter names at import and 1.13 lacks (torch.float8_e4m3fn,
  torch.float8_e5m2): each a distinct placeholder object, only ever used as a dict key or in `dtype in (...)` tests,
  which no tensor of an F32/F16/BF16 checkpoint can equal. A checkpoint with FP8 tensors is refused by name.
"""

from __future__ import annotations

import os
import runpy
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CONVERTER = os.path.join(HERE, "llama.cpp", "convert_hf_to_gguf.py")


class TorchPlaceholder:
    """Stands for a torch dtype this torch does not have."""

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"torch.{self.name} (placeholder: absent from this torch)"


def main() -> None:
    sys.path.insert(0, os.path.join(HERE, "stubs"))
    import torch

    for name in ("float8_e4m3fn", "float8_e5m2"):
        if not hasattr(torch, name):
            setattr(torch, name, TorchPlaceholder(name))

    if not os.path.isfile(CONVERTER):
        sys.exit(f"run_convert.py: {CONVERTER} is missing (run scripts/convert-ref.sh)")
    # as `python3 convert_hf_to_gguf.py ...` would: the script's folder first on sys.path (for `conversion`)
    sys.path.insert(0, os.path.dirname(CONVERTER))
    sys.argv[0] = CONVERTER
    runpy.run_path(CONVERTER, run_name="__main__")


if __name__ == "__main__":
    main()
