#!/usr/bin/python3
"""Write tests/convert/data/f16_numpy.bin: float32 bit patterns and what numpy's astype(np.float16) makes of them.

    /usr/bin/python3 tests/convert/make_f16_expected.py

gguf-py writes F16 tensors with numpy's conversion, so convert's F16 output must equal it value by value:
every NaN payload (numpy keeps the payload's top bits; ggml writes 0x7e00), the subnormal range, ties,
the overflow edge, and random values of every exponent. Records: u32 little-endian input, u16 output.
"""
import struct
import sys
from pathlib import Path

import numpy as np

rng = np.random.default_rng(20261206)
vals = []
for e in range(256):  # every exponent, both signs, random mantissas
    m = rng.integers(0, 1 << 23, size=64, dtype=np.uint32)
    vals += list((np.uint32(e) << np.uint32(23)) | m)
    vals += list((np.uint32(e) << np.uint32(23)) | m | np.uint32(0x80000000))
for e in range(100, 145):  # ties and near-ties at every half exponent, normal and subnormal
    for low in (0x1000, 0x0fff, 0x1001, 0x3000, 0x2fff, 0x3001, 0x0800, 0x0001, 0x1fff, 0x2000):
        for top in (0, 1 << 13, 0x7fe000, 0x400000):
            vals.append((e << 23) | top | low)
vals += [0, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000, 0xffc00000, 0x7f800001, 0x7fa00000, 0x7f802000,
         0x7fffffff, 0xffffffff, 0x477fe000, 0x477fefff, 0x477ff000, 0x477fffff, 0x47800000, 0x33000000, 0x33000001,
         0x337fffff, 0x33800000, 0x38800000, 0x387fffff, 0x387fe000, 0x387ff000]
a = np.array(vals, dtype=np.uint32)
with np.errstate(all="ignore"):
    h = a.view(np.float32).astype(np.float16).view(np.uint16)
out = Path(__file__).resolve().parent / "data" / "f16_numpy.bin"
with open(out, "wb") as f:
    for x, y in zip(a.tolist(), h.tolist()):
        f.write(struct.pack("<IH", x, y))
print(f"{out}: {len(vals)} values (numpy {np.__version__})", file=sys.stderr)
