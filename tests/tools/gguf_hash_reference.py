#!/usr/bin/env python3
"""An independent reference for `minfer hash`: what llama-gguf-hash prints, computed without minfer.

It parses a GGUF file (or part 1 of a split set) itself, sizes every tensor with ggml's type table
(written here from ggml's ggml-common.h / ggml.c type traits), and hashes exactly each tensor's bytes
(ggml_nbytes, no padding) with Python's hashlib (sha1, sha256, the UUIDv5) and Debian's `xxhsum`
tool (xxHash 0.8: `-H1` = XXH64, `-H3` = XXH3_64bits, both printed big-endian), fed through a pipe.
Standard library only; nothing of minfer is imported or called. Tests compare its stdout with the
real `minfer hash`, byte for byte.

  gguf_hash_reference.py [--xxh64] [--xxh3] [--sha1] [--sha256] [--uuid] [--all] [--no-layer]
                         [--file-sha256] [--expect HEX]... [--name TEXT] MODEL

Output lines are llama-gguf-hash's `printf("%-8s  %-s  %s\\n", type, hex, name)`: per tensor in file
order each selected kind (xxh64, xxh3, sha1, sha256) named `PATH:TENSOR`, then the whole-model
lines in the same order named `PATH`, then `uuid`. PATH is MODEL as typed (or --name TEXT, to write
a manifest for another file name). No kind given: xxh64. --all = xxh64, sha1, sha256 (not xxh3, not
uuid), as on llama.cpp's master. A tensor of 4 GiB or more is hashed whole (llama-gguf-hash's SHA-1
takes a 32-bit length; this reference does not copy that bug).

--file-sha256: after those lines, `<sha256 of the whole file>  <path>` per part file (sha256sum's
format; a split set's part paths are part 1's directory as typed + the part's name). With no kind
flag given, only these lines. --expect HEX (one per part, implies --file-sha256) then prints
`<path>: OK|FAILED` per part and exits 1 on a failure.

Exit codes: 0 ok, 1 invalid file (message on stderr) or an --expect failure, 2 usage, 3 I/O.
"""

import errno
import hashlib
import mmap
import os
import re
import struct
import subprocess
import sys

# ggml type id -> (name, elements per block, bytes per block). None: ids ggml removed (no longer
# loadable). From ggml-common.h's block structs:
#   q4_0  = f16 d + 16 B             (32 -> 18)    q4_1 = f16 d, m + 16 B        (32 -> 20)
#   q5_0  = f16 d + 4 B qh + 16 B    (32 -> 22)    q5_1 = d, m + 4 + 16          (32 -> 24)
#   q8_0  = f16 d + 32 B             (32 -> 34)    q8_1 = d, s + 32              (32 -> 36)
#   q2_K  = 16 scales + 64 qs + d, dmin               (256 -> 84)
#   q3_K  = 32 hmask + 64 qs + 12 scales + d          (256 -> 110)
#   q4_K  = d, dmin + 12 scales + 128 qs              (256 -> 144)
#   q5_K  = d, dmin + 12 scales + 32 qh + 128 qs      (256 -> 176)
#   q6_K  = 128 ql + 64 qh + 16 scales + d            (256 -> 210)
#   q8_K  = f32 d + 256 qs + 16 x i16 bsums           (256 -> 292)
#   iq2_xxs = d + 32 x u16                            (256 -> 66)
#   iq2_xs  = d + 32 x u16 + 8 scales                 (256 -> 74)
#   iq3_xxs = d + 3*256/8                             (256 -> 98)
#   iq1_s   = d + 32 qs + 8 x u16 qh                  (256 -> 50)
#   iq4_nl  = d + 16                                  (32 -> 18)
#   iq3_s   = d + 64 qs + 8 qh + 32 signs + 4 scales  (256 -> 110)
#   iq2_s   = d + 64 qs + 8 qh + 8 scales             (256 -> 82)
#   iq4_xs  = d + u16 scales_h + 4 scales_l + 128 qs  (256 -> 136)
#   iq1_m   = 32 qs + 16 qh + 8 scales                (256 -> 56)
#   tq1_0   = 48 qs + 4 qh + d                        (256 -> 54)
#   tq2_0   = 64 qs + d                               (256 -> 66)
#   mxfp4   = e8m0 e + 16                             (32 -> 17)
#   nvfp4   = 4 ue4m3 scales + 32                     (64 -> 36)
#   q1_0    = f16 d + 16 B of bits                    (128 -> 18)
#   q2_0    = f16 d + 16 B of 2-bit codes             (64 -> 18)
GGML_TYPES = {
    0: ("f32", 1, 4), 1: ("f16", 1, 2), 2: ("q4_0", 32, 18), 3: ("q4_1", 32, 20),
    4: None, 5: None, 6: ("q5_0", 32, 22), 7: ("q5_1", 32, 24), 8: ("q8_0", 32, 34), 9: ("q8_1", 32, 36),
    10: ("q2_K", 256, 84), 11: ("q3_K", 256, 110), 12: ("q4_K", 256, 144), 13: ("q5_K", 256, 176),
    14: ("q6_K", 256, 210), 15: ("q8_K", 256, 292),
    16: ("iq2_xxs", 256, 66), 17: ("iq2_xs", 256, 74), 18: ("iq3_xxs", 256, 98), 19: ("iq1_s", 256, 50),
    20: ("iq4_nl", 32, 18), 21: ("iq3_s", 256, 110), 22: ("iq2_s", 256, 82), 23: ("iq4_xs", 256, 136),
    24: ("i8", 1, 1), 25: ("i16", 1, 2), 26: ("i32", 1, 4), 27: ("i64", 1, 8), 28: ("f64", 1, 8),
    29: ("iq1_m", 256, 56), 30: ("bf16", 1, 2), 31: None, 32: None, 33: None,
    34: ("tq1_0", 256, 54), 35: ("tq2_0", 256, 66), 36: None, 37: None, 38: None,
    39: ("mxfp4", 32, 17), 40: ("nvfp4", 64, 36), 41: ("q1_0", 128, 18), 42: ("q2_0", 64, 18),
}

# GGUF metadata value types: tag -> fixed size (None: string 8, array 9).
VALUE_SIZES = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 8: None, 9: None, 10: 8, 11: 8, 12: 8}

UUID_NAMESPACE = bytes.fromhex("ef001206dadc5f6da15f3359e577d4e5")
KIND_ORDER = ("xxh64", "xxh3", "sha1", "sha256")  # per-tensor and model line order; uuid last
CHUNK = 16 << 20


class BadFile(Exception):
    pass


class Reader:
    """Little-endian fields of a mapped file, with bounds checks."""

    def __init__(self, buf, path):
        self.buf, self.pos, self.path = buf, 0, path

    def take(self, n, what):
        if n < 0 or self.pos + n > len(self.buf):
            raise BadFile(f"{self.path}: file ends while reading {what}")
        b = self.buf[self.pos:self.pos + n]
        self.pos += n
        return b

    def u(self, fmt, what):
        return struct.unpack("<" + fmt, self.take(struct.calcsize(fmt), what))[0]

    def string(self, what):
        n = self.u("Q", what + " length")
        return bytes(self.take(n, what))


def skip_value(r, vtype, what):
    """Skip one metadata value of type `vtype`; returns it for scalars and strings (arrays: None)."""
    if vtype not in VALUE_SIZES:
        raise BadFile(f"{r.path}: {what} has invalid value type {vtype}")
    if vtype == 8:
        return r.string(what)
    if vtype == 9:
        etype = r.u("I", what + " element type")
        count = r.u("Q", what + " count")
        if etype == 9 or etype not in VALUE_SIZES:
            raise BadFile(f"{r.path}: {what} has invalid array element type {etype}")
        if etype == 8:
            for _ in range(count):
                r.string(what + " item")
        else:
            r.take(count * VALUE_SIZES[etype], what + " items")
        return None
    fmt = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "B", 10: "Q", 11: "q", 12: "d"}[vtype]
    return (vtype, r.u(fmt, what))


def nbytes(ne, type_id):
    """ggml_nbytes of a contiguous tensor: rows of whole blocks; 0 when a dimension is 0."""
    _, blck, tsize = GGML_TYPES[type_id]
    for d in ne:
        if d == 0:
            return 0
    rows = 1
    for d in ne[1:]:
        rows *= d
    return ne[0] // blck * tsize * rows


class Part:
    """A part file: its mapping, and its descriptor to find holes (sparse files read as zeros)."""

    def __init__(self, path):
        try:
            self.f = open(path, "rb")
        except OSError as e:
            raise OSError(f"cannot open '{path}': {e.strerror}") from e
        self.size = os.fstat(self.f.fileno()).st_size
        self.buf = mmap.mmap(self.f.fileno(), 0, access=mmap.ACCESS_READ) if self.size > 0 else b""

    def segments(self, start, end):
        """(offset, length, is_hole) covering [start, end): holes need not be read (or faulted in)."""
        fd, pos = self.f.fileno(), start
        while pos < end:
            try:
                data = os.lseek(fd, pos, os.SEEK_DATA)
            except OSError:  # ENXIO: no data after pos; or no SEEK_DATA here: treat all as data
                data = end if sys.exc_info()[1].errno == errno.ENXIO else pos
            data = min(data, end)
            if data > pos:
                yield pos, data - pos, True
                pos = data
                continue
            try:
                hole = os.lseek(fd, pos, os.SEEK_HOLE)
            except OSError:
                hole = end
            hole = min(max(hole, pos + 1), end)
            yield pos, hole - pos, False
            pos = hole


def parse_part(path):
    """Returns (kv dict of scalars/strings, [(name, abs_offset, nbytes)], Part)."""
    part = Part(path)
    buf, size = part.buf, part.size
    r = Reader(memoryview(buf), path)
    if bytes(r.take(4, "magic")) != b"GGUF":
        raise BadFile(f"{path}: invalid magic")
    version = r.u("I", "version")
    if version not in (2, 3):
        raise BadFile(f"{path}: unsupported GGUF version {version}")
    n_tensors = r.u("q", "n_tensors")
    n_kv = r.u("q", "n_kv")
    if n_tensors < 0 or n_kv < 0:
        raise BadFile(f"{path}: negative count")
    kv = {}
    for i in range(n_kv):
        key = r.string(f"key of KV {i}").decode("utf-8", "replace")
        vtype = r.u("I", f"type of '{key}'")
        kv[key] = skip_value(r, vtype, f"'{key}'")
    alignment = 32
    if "general.alignment" in kv:
        a = kv["general.alignment"]
        if a is None or a[0] != 4 or a[1] == 0 or (a[1] & (a[1] - 1)) != 0:
            raise BadFile(f"{path}: bad general.alignment")
        alignment = a[1]
    infos = []
    for i in range(n_tensors):
        name = r.string(f"name of tensor {i}").decode("utf-8", "surrogateescape")
        n_dims = r.u("I", f"n_dims of '{name}'")
        if n_dims > 4:
            raise BadFile(f"{path}: tensor '{name}' has {n_dims} dimensions")
        ne = [r.u("q", f"ne of '{name}'") for _ in range(n_dims)]
        type_id = r.u("I", f"type of '{name}'")
        offset = r.u("Q", f"offset of '{name}'")
        if GGML_TYPES.get(type_id) is None:
            raise BadFile(f"{path}: tensor '{name}' has invalid type {type_id}")
        if any(d < 0 for d in ne) or (ne and ne[0] % GGML_TYPES[type_id][1] != 0):
            raise BadFile(f"{path}: tensor '{name}' has a bad shape {ne}")
        infos.append((name, ne, type_id, offset))
    data_offset = (r.pos + alignment - 1) // alignment * alignment
    tensors, expect = [], 0
    for name, ne, type_id, offset in infos:
        n = nbytes(ne or [1], type_id)
        if offset != expect:  # ggml: each offset is the running sum of padded sizes
            raise BadFile(f"{path}: tensor '{name}' has offset {offset}, expected {expect}")
        if data_offset + offset + n > size:
            raise BadFile(f"{path}: tensor '{name}' lies beyond the end of the file (truncated?)")
        tensors.append((name, data_offset + offset, n))
        expect += (n + alignment - 1) // alignment * alignment
    if n_tensors > 0 and data_offset > size:
        raise BadFile(f"{path}: data section starts beyond the end of the file")
    return kv, tensors, part


SPLIT_RE = re.compile(r"^(.*)-(\d{5})-of-(\d{5})\.gguf$")


def open_model(typed):
    """[(part path text, tensors, buf, size)] for a model or a split set given by part 1."""
    kv, tensors, part = parse_part(typed)
    parts = [(typed, tensors, part)]
    count = kv.get("split.count")
    if count is not None and count[1] > 1:
        n = count[1]
        d, base = os.path.split(typed)
        m = SPLIT_RE.match(base)
        if m is None or int(m.group(2)) != 1 or int(m.group(3)) != n:
            raise BadFile(f"{typed}: split.count = {n} but the name is not <prefix>-00001-of-{n:05d}.gguf")
        for i in range(2, n + 1):
            p = os.path.join(d, f"{m.group(1)}-{i:05d}-of-{n:05d}.gguf")
            _, t, pt = parse_part(p)
            parts.append((p, t, pt))
    return parts


class XxhSum:
    """One running XXH64 or XXH3 through Debian's `xxhsum` reading stdin."""

    def __init__(self, kind):
        flag = {"xxh64": "-H1", "xxh3": "-H3"}[kind]
        self.kind = kind
        self.proc = subprocess.Popen(["xxhsum", flag, "-"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def update(self, b):
        self.proc.stdin.write(b)

    def hexdigest(self):
        out, _ = self.proc.communicate()
        text = out.decode().strip()
        if self.proc.returncode != 0:
            raise OSError(f"xxhsum failed ({self.proc.returncode})")
        m = re.fullmatch(r"XXH3 \(stdin\) = ([0-9a-f]{16})", text) or re.fullmatch(r"([0-9a-f]{16})  stdin", text)
        if m is None:
            raise OSError(f"unexpected xxhsum output: {text!r}")
        return m.group(1)


class Uuid:
    def __init__(self):
        self.h = hashlib.sha1(UUID_NAMESPACE)

    def update(self, b):
        self.h.update(b)

    def hexdigest(self):
        u = bytearray(self.h.digest()[:16])
        u[6] = (u[6] & 0x0F) | 0x50
        u[8] = (u[8] & 0x3F) | 0x80
        h = u.hex()
        return f"{h[0:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


def make_hasher(kind):
    if kind in ("xxh64", "xxh3"):
        return XxhSum(kind)
    if kind == "uuid":
        return Uuid()
    return hashlib.new(kind)


ZEROS = memoryview(bytes(CHUNK))


def feed(hashers, part, start, n):
    view = memoryview(part.buf)
    for seg, length, hole in part.segments(start, start + n):
        pos, end = seg, seg + length
        while pos < end:
            step = min(CHUNK, end - pos)
            chunk = ZEROS[:step] if hole else view[pos:pos + step]
            for h in hashers:
                h.update(chunk)
            pos += step


def line(kind, hexd, name):
    return "%-8s  %s  %s\n" % (kind, hexd, name)


def usage(msg):
    sys.stderr.write(f"gguf_hash_reference: {msg}\n")
    sys.exit(2)


def main(argv):
    kinds, no_layer, uuid, file_sha, expects, name, model = set(), False, False, False, [], None, None
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in ("--xxh64", "--xxh3", "--sha1", "--sha256"):
            kinds.add(a[2:])
        elif a == "--all":
            kinds.update(("xxh64", "sha1", "sha256"))
        elif a == "--uuid":
            uuid = True
        elif a == "--no-layer":
            no_layer = True
        elif a == "--file-sha256":
            file_sha = True
        elif a in ("--expect", "--name"):
            if i + 1 >= len(argv):
                usage(f"{a} needs a value")
            i += 1
            if a == "--expect":
                expects.append(argv[i].lower())
                file_sha = True
            else:
                name = argv[i]
        elif a.startswith("--"):
            usage(f"unknown option {a}")
        elif model is None:
            model = a
        else:
            usage("one model only")
        i += 1
    if model is None:
        usage("no model given")
    if not kinds and not uuid and not file_sha:
        kinds.add("xxh64")
    kinds = [k for k in KIND_ORDER if k in kinds]
    try:
        parts = open_model(model)
    except BadFile as e:
        sys.stderr.write(f"invalid GGUF: {e}\n")
        return 1
    except OSError as e:
        sys.stderr.write(f"I/O error: {e}\n")
        return 3
    if expects and len(expects) != len(parts):
        usage(f"{len(expects)} --expect values for {len(parts)} part(s)")
    if name is None:
        name = model

    out = []
    model_hashers = [make_hasher(k) for k in kinds] + ([make_hasher("uuid")] if uuid else [])
    for _, tensors, part in parts:
        for tname, off, n in tensors:
            per = [] if no_layer else [make_hasher(k) for k in kinds]
            feed(per + model_hashers, part, off, n)
            for k, h in zip(kinds, per):
                out.append(line(k, h.hexdigest(), f"{name}:{tname}"))
    for k, h in zip(kinds + (["uuid"] if uuid else []), model_hashers):
        out.append(line(k, h.hexdigest(), name))

    rc = 0
    if file_sha:
        sums = []
        for p, _, part in parts:
            h = hashlib.sha256()
            feed([h], part, 0, part.size)
            sums.append((p, h.hexdigest()))
        for p, hexd in sums:
            out.append(f"{hexd}  {p}\n")
        for (p, hexd), want in zip(sums, expects):
            ok = hexd == want
            out.append(f"{p}: {'OK' if ok else 'FAILED'}\n")
            if not ok:
                rc = 1
    sys.stdout.write("".join(out))
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
