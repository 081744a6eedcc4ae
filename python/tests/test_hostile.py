"""Hostile input from Python: never a crash, never anything but the library's exceptions.

- The corruption table (tests/unit/test_corruption.cpp: llama.cpp's handcrafted failures, the ways
  GGUF parsers have been broken, split-set damage) rebuilt byte by byte in Python: each file gives
  InvalidFileError (GGUFIOError for a missing part) with the row's code, section, subject, offset,
  expected and found, as the C++ test checks them; a sample of rows is also checked against
  `minfer info` (the same code and message).
- A valid file cut at every byte of its head, and random byte flips (seeded): an exception of
  minfer.errors or a model that can be read in full; nothing else.
- Wrong Python types to every public function and method: TypeError.
- A closed model: ValueError from every accessor; arrays taken before close() stay readable, also
  after `del model` and a garbage collection.
"""

from __future__ import annotations

import gc
import json
import os
import random
import re
import struct
import subprocess
from pathlib import Path

import numpy as np
import pytest

import minfer
from minfer.errors import GGUFError, GGUFIOError, InvalidFileError, RequestError

import gguf_bytes as gb

# ---- a byte builder with the C++ test's vocabulary (tests/support/gguf_bytes.hpp) --------------------

U8, I8, U16, I16, U32, I32, F32, BOOL, STRING, ARRAY, U64, I64, F64 = range(13)


class G:
    """Raw bytes, written as told (valid or not): the methods of the C++ tests' gguf_bytes."""

    def __init__(self) -> None:
        self.b = b""

    def put(self, fmt: str, v) -> "G":
        self.b += struct.pack("<" + fmt, v)
        return self

    def u8(self, v): return self.put("B", v)
    def u16(self, v): return self.put("H", v)
    def u32(self, v): return self.put("I", v)
    def i32(self, v): return self.put("i", v)
    def u64(self, v): return self.put("Q", v)
    def i64(self, v): return self.put("q", v)

    def raw(self, s) -> "G":
        self.b += s.encode("latin-1") if isinstance(s, str) else bytes(s)
        return self

    def zeros(self, n: int) -> "G":
        self.b += b"\0" * n
        return self

    def pad(self, a: int) -> "G":
        return self.zeros((a - len(self.b) % a) % a)

    def str(self, s) -> "G":
        self.b += gb.gstr(s.encode("latin-1") if isinstance(s, str) else s)
        return self

    def str_len(self, declared: int, content: str = "") -> "G":
        return self.u64(declared).raw(content)

    def type(self, t: int) -> "G":
        return self.u32(t)

    def magic(self) -> "G":
        return self.raw("GGUF")

    def header(self, version: int, n_tensors: int, n_kv: int) -> "G":
        return self.magic().u32(version).i64(n_tensors).i64(n_kv)

    def key(self, k, t: int) -> "G":
        return self.str(k).type(t)

    def kv_u8(self, k, v): return self.key(k, U8).u8(v)
    def kv_u32(self, k, v): return self.key(k, U32).u32(v)
    def kv_i32(self, k, v): return self.key(k, I32).i32(v)
    def kv_u64(self, k, v): return self.key(k, U64).u64(v)
    def kv_str(self, k, v): return self.key(k, STRING).str(v)

    def kv_array(self, k, elem: int, count: int) -> "G":
        return self.key(k, ARRAY).type(elem).u64(count)

    def tensor_info(self, name, ne, type_id: int, offset: int) -> "G":
        self.str(name).u32(len(ne))
        for d in ne:
            self.b += struct.pack("<Q", d & (2**64 - 1))  # i64 on disk, any bit pattern
        return self.u32(type_id).u64(offset)


def gguf(n_tensors: int, n_kv: int) -> G:
    return G().header(3, n_tensors, n_kv)


def gguf_raw(n_tensors: int, n_kv: int) -> G:
    return G().magic().u32(3).u64(n_tensors).u64(n_kv)


def version(v: int) -> G:
    return G().header(v, 0, 0)


H = 24
u64max = p64m1 = 2**64 - 1
i64max = 2**63 - 1
p62, p63 = 2**62, 2**63
p63m1 = p63 - 1
MAX_STR = MAX_ARR = 2**30
TYPE_COUNT = 43
f32 = 0
i8 = 24
q4_0 = 2


def kv_type_at(r, k): return r + 8 + k
def kv_value_at(r, k): return r + 12 + k
def t_dims_at(r, l): return r + 8 + l
def t_ne_at(r, l, d): return r + 12 + l + 8 * d
def t_type_at(r, l, nd): return r + 12 + l + 8 * nd
def t_offset_at(r, l, nd): return r + 16 + l + 8 * nd
def t_size(l, nd): return 24 + l + 8 * nd


l_key = "my_key_0"
l_t0 = "my_tensor_0"
l_t1 = "my_tensor_1"
l_long = "my_tensor_0_with_a_very_long_name_which_is_longer_than_what_is_allowed_for_ggml_tensors"
NONE = object()  # "no subject" in a row (the C++ row's "")


class Row:
    def __init__(self, name, make, code, where, subject=NONE, offset=None, expected=None, found=None):
        self.name, self.make, self.code, self.where = name, make, code, where
        self.subject, self.offset, self.expected, self.found = subject, offset, expected, found


def R(*a, **k):
    return Row(*a, **k)


# The rows of tests/unit/test_corruption.cpp, in its order. make() returns the file's bytes.
TABLE = [
    # ======== llama.cpp tests/test-gguf.cpp, handcrafted failure cases ========
    R("llama_HEADER_BAD_MAGIC", lambda: G().raw("FUGG").u32(3).i64(0).i64(0), "bad_magic", "header",
      offset=0, expected=0x46554747, found=0x47475546),
    R("llama_HEADER_BAD_VERSION_0", lambda: version(0), "bad_version", "header", offset=4, expected=3, found=0),
    R("llama_HEADER_BAD_VERSION_1", lambda: version(1), "version_unsupported", "header", offset=4, expected=3, found=1),
    R("llama_HEADER_BAD_VERSION_FUTURE", lambda: version(4), "version_too_new", "header", offset=4, expected=3,
      found=4),
    R("llama_HEADER_BAD_N_TENSORS", lambda: gguf_raw(u64max, 0), "negative_count", "header", "n_tensors",
      offset=8, expected=0, found=u64max),
    R("llama_HEADER_BAD_N_KV", lambda: gguf_raw(0, u64max), "negative_count", "header", "n_kv", offset=16,
      expected=0, found=u64max),
    R("llama_KV_BAD_KEY_SIZE", lambda: gguf(0, 1).u64(u64max).raw("my_key"), "string_too_long", "metadata",
      offset=H, expected=MAX_STR, found=u64max),
    R("llama_KV_EMPTY_KEY", lambda: gguf(0, 1).kv_u32("", 7), "empty_key", "metadata", offset=H),
    R("llama_KV_BAD_TYPE", lambda: gguf(0, 1).str(l_key).u32(13).u8(0), "bad_value_type", "metadata", l_key,
      offset=kv_type_at(H, 8), found=13),
    R("llama_KV_BAD_VALUE_SIZE", lambda: gguf(0, 1).kv_array(l_key, U64, 1 << 37), "array_too_long", "metadata",
      l_key, offset=kv_value_at(H, 8) + 4, expected=MAX_ARR, found=1 << 37),
    R("llama_KV_DUPLICATE_KEY", lambda: gguf(0, 2).kv_u8(l_key, 1).kv_u8(l_key, 2), "duplicate_key", "metadata",
      l_key, offset=H + 8 + 8 + 4 + 1, expected=0, found=1),
    R("llama_KV_BAD_ALIGN", lambda: gguf(0, 1).kv_u32("general.alignment", 13), "bad_alignment", "metadata",
      "general.alignment", offset=H, found=13),
    R("llama_KV_WRONG_TYPE_ALIGN", lambda: gguf(0, 1).kv_i32("general.alignment", 1), "alignment_wrong_type",
      "metadata", "general.alignment", offset=H, expected=U32, found=I32),
    R("llama_TENSORS_BAD_NAME_SIZE", lambda: gguf(1, 0).tensor_info(l_long, [32], f32, 0), "bad_name_length",
      "tensor_info", l_long, offset=H, expected=63, found=len(l_long)),
    R("llama_TENSORS_BAD_N_DIMS", lambda: gguf(1, 0).str(l_t0).u32(5).i64(32).u32(f32).u64(0), "bad_n_dims",
      "tensor_info", l_t0, offset=t_dims_at(H, 11), expected=4, found=5),
    R("llama_TENSORS_BAD_SHAPE", lambda: gguf(1, 0).tensor_info(l_t0, [-1], f32, 0), "bad_dim", "tensor_info",
      l_t0, offset=t_ne_at(H, 11, 0), expected=0, found=u64max),
    R("llama_TENSORS_NE_TOO_BIG", lambda: gguf(1, 0).tensor_info(l_t0, [4 * (2**31 - 1)] * 2, f32, 0),
      "shape_overflow", "tensor_info", l_t0, offset=t_ne_at(H, 11, 0), expected=0, found=0),
    R("llama_TENSORS_NBYTES_TOO_BIG", lambda: gguf(1, 0).tensor_info(l_t0, [1536000000, 1536000000], 27, 0),
      "size_overflow", "tensor_info", l_t0, offset=t_ne_at(H, 11, 0), expected=0, found=0),
    R("llama_TENSORS_BAD_TYPE", lambda: gguf(1, 0).tensor_info(l_t0, [32], TYPE_COUNT, 0), "bad_tensor_type",
      "tensor_info", l_t0, offset=t_type_at(H, 11, 1), found=TYPE_COUNT),
    R("llama_TENSORS_BAD_OFFSET", lambda: gguf(1, 0).tensor_info(l_t0, [32], f32, u64max), "offset_mismatch",
      "tensor_info", l_t0, offset=t_offset_at(H, 11, 1), expected=0, found=u64max),
    R("llama_TENSORS_DUPLICATE_NAME",
      lambda: gguf(2, 0).tensor_info("my_tensor", [8], f32, 0).tensor_info("my_tensor", [8], f32, 32),
      "duplicate_tensor", "tensor_info", "my_tensor", offset=H + t_size(9, 1), expected=0, found=1),
    R("llama_TENSORS_BAD_ALIGN",
      lambda: gguf(1, 1).kv_u32("general.alignment", 13).tensor_info(l_t0, [8], f32, 0), "bad_alignment",
      "metadata", "general.alignment", offset=H, found=13),
    R("llama_TENSORS_INCONSISTENT_ALIGN",
      lambda: gguf(2, 0).tensor_info(l_t0, [3], f32, 0).tensor_info(l_t1, [3], f32, 12), "offset_mismatch",
      "tensor_info", l_t1, offset=t_offset_at(H + t_size(11, 1), 11, 1), expected=32, found=12),
    R("llama_TENSORS_SUCCESS_without_its_data", lambda: gguf(1, 0).tensor_info(l_t0, [8], f32, 0).pad(32),
      "data_truncated", "data", l_t0, offset=96, expected=96 + 32, found=96),
    R("llama_DATA_NOT_ENOUGH_DATA", lambda: gguf(1, 0).tensor_info(l_t0, [8], f32, 0).pad(32).zeros(31),
      "data_truncated", "data", l_t0, offset=96, expected=96 + 32, found=96 + 31),
    R("llama_DATA_BAD_ALIGN",
      lambda: gguf(1, 1).kv_u32("general.alignment", 13).tensor_info(l_t0, [8], f32, 0).pad(32).zeros(32),
      "bad_alignment", "metadata", "general.alignment", offset=H, found=13),
    R("llama_DATA_INCONSISTENT_ALIGN",
      lambda: gguf(2, 0).tensor_info(l_t0, [3], f32, 0).tensor_info(l_t1, [3], f32, 12).pad(32).zeros(24),
      "offset_mismatch", "tensor_info", l_t1, offset=t_offset_at(H + t_size(11, 1), 11, 1), expected=32,
      found=12),
    R("llama_DATA_MEM_SIZE_OVERFLOW",
      lambda: gguf(2, 0).tensor_info(l_t0, [0x7FFFFFFFFFFFFFC0], i8, 0)
      .tensor_info(l_t1, [0x7FFFFFFFFFFFFFC0], i8, 0x7FFFFFFFFFFFFFC0).pad(32).zeros(32),
      "data_truncated", "data", l_t0, offset=128, expected=u64max, found=160),

    # ======== USERS.md 1: declared counts and lengths that no tiny file can back ========
    R("n_kv_2p62", lambda: gguf_raw(0, p62), "count_too_large", "header", "n_kv", offset=16, expected=0, found=p62),
    R("n_kv_2p63m1", lambda: gguf_raw(0, p63m1), "count_too_large", "header", "n_kv", offset=16, expected=0,
      found=p63m1),
    R("n_kv_2p63_is_negative", lambda: gguf_raw(0, p63), "negative_count", "header", "n_kv", offset=16, expected=0,
      found=p63),
    R("n_kv_2p64m1_is_negative", lambda: gguf_raw(0, p64m1), "negative_count", "header", "n_kv", offset=16,
      expected=0, found=p64m1),
    R("n_tensors_2p62", lambda: gguf_raw(p62, 0), "count_too_large", "header", "n_tensors", offset=8, expected=0,
      found=p62),
    R("n_tensors_2p63m1", lambda: gguf_raw(p63m1, 0), "count_too_large", "header", "n_tensors", offset=8,
      expected=0, found=p63m1),
    R("n_tensors_2p63_is_negative", lambda: gguf_raw(p63, 0), "negative_count", "header", "n_tensors", offset=8,
      expected=0, found=p63),
    R("n_tensors_2p64m1_is_negative", lambda: gguf_raw(p64m1, 0), "negative_count", "header", "n_tensors",
      offset=8, expected=0, found=p64m1),
    R("negative_n_kv", lambda: gguf(0, -5), "negative_count", "header", "n_kv", offset=16, expected=0,
      found=2**64 - 5),
    R("negative_n_tensors", lambda: gguf(-5, 0), "negative_count", "header", "n_tensors", offset=8, expected=0,
      found=2**64 - 5),
    R("both_counts_negative_reports_n_tensors", lambda: gguf(-1, -1), "negative_count", "header", "n_tensors",
      offset=8),
    R("n_tensors_bounded_after_the_kvs_minimum", lambda: gguf(2, 1).zeros(63), "count_too_large", "header",
      "n_tensors", offset=8, expected=1, found=2),
    R("key_length_2p62", lambda: gguf(0, 1).u64(p62).raw("abcdef"), "string_too_long", "metadata", offset=H,
      expected=MAX_STR, found=p62),
    R("key_length_2p63m1", lambda: gguf(0, 1).u64(p63m1).raw("abcdef"), "string_too_long", "metadata", offset=H,
      expected=MAX_STR, found=p63m1),
    R("key_length_2p63", lambda: gguf(0, 1).u64(p63).raw("abcdef"), "string_too_long", "metadata", offset=H,
      expected=MAX_STR, found=p63),
    R("key_length_2p64m1", lambda: gguf(0, 1).u64(p64m1).raw("abcdef"), "string_too_long", "metadata", offset=H,
      expected=MAX_STR, found=p64m1),
    R("key_exceeds_file", lambda: gguf(0, 1).str_len(100, "general.name").u32(8), "string_exceeds_file",
      "metadata", offset=H, expected=16, found=100),
    R("string_length_2p62", lambda: gguf(0, 1).key("s", STRING).u64(p62), "string_too_long", "metadata", "s",
      offset=kv_value_at(H, 1), expected=MAX_STR, found=p62),
    R("string_length_2p63m1", lambda: gguf(0, 1).key("s", STRING).u64(p63m1), "string_too_long", "metadata", "s",
      offset=kv_value_at(H, 1), expected=MAX_STR, found=p63m1),
    R("string_length_2p63", lambda: gguf(0, 1).key("s", STRING).u64(p63), "string_too_long", "metadata", "s",
      offset=kv_value_at(H, 1), expected=MAX_STR, found=p63),
    R("string_length_2p64m1", lambda: gguf(0, 1).key("s", STRING).u64(p64m1), "string_too_long", "metadata", "s",
      offset=kv_value_at(H, 1), expected=MAX_STR, found=p64m1),
    R("string_at_the_cap_exceeds_file", lambda: gguf(0, 1).key("s", STRING).u64(MAX_STR).raw("abc"),
      "string_exceeds_file", "metadata", "s", offset=kv_value_at(H, 1), expected=3, found=MAX_STR),
    *[R(f"u8_array_count_{tag}", (lambda c=c: gguf(0, 1).kv_array("a", U8, c)), "array_too_long", "metadata", "a",
        offset=kv_value_at(H, 1) + 4, expected=MAX_ARR, found=c)
      for tag, c in (("2p62", p62), ("2p63m1", p63m1), ("2p63", p63), ("2p64m1", p64m1))],
    *[R(f"string_array_count_{tag}", (lambda c=c: gguf(0, 1).kv_array("a", STRING, c)), "array_too_long",
        "metadata", "a", offset=kv_value_at(H, 1) + 4, expected=MAX_ARR, found=c)
      for tag, c in (("2p62", p62), ("2p63m1", p63m1), ("2p63", p63), ("2p64m1", p64m1))],
    R("u8_array_at_the_cap_exceeds_file", lambda: gguf(0, 1).kv_array("a", U8, MAX_ARR).zeros(4),
      "array_exceeds_file", "metadata", "a", offset=kv_value_at(H, 1) + 12, expected=4, found=MAX_ARR),
    R("string_array_exceeds_file", lambda: gguf(0, 1).kv_array("a", STRING, 3).zeros(16), "array_exceeds_file",
      "metadata", "a", offset=kv_value_at(H, 1) + 4, expected=16, found=3),
    R("string_in_array_exceeds_file", lambda: gguf(0, 1).kv_array("a", STRING, 2).str("x").str_len(50, "yz"),
      "string_exceeds_file", "metadata", "a", offset=kv_value_at(H, 1) + 12 + 9, expected=2, found=50),
    *[R(f"tensor_name_length_{tag}", (lambda c=c: gguf(1, 0).u64(c).zeros(17)), "string_too_long", "tensor_info",
        offset=H, expected=MAX_STR, found=c)
      for tag, c in (("2p62", p62), ("2p63m1", p63m1), ("2p63", p63), ("2p64m1", p64m1))],
    R("tensor_name_exceeds_file", lambda: gguf(1, 0).str_len(30, "blk.0.attn_q").zeros(5), "string_exceeds_file",
      "tensor_info", offset=H, expected=17, found=30),

    # ======== USERS.md 2: overflow in size arithmetic ========
    R("element_count_overflow", lambda: gguf(1, 0).tensor_info("w", [1 << 32, 1 << 31], f32, 0), "shape_overflow",
      "tensor_info", "w", offset=t_ne_at(H, 1, 0)),
    R("element_count_overflow_in_ne3", lambda: gguf(1, 0).tensor_info("w", [2, 1, 1, i64max], f32, 0),
      "shape_overflow", "tensor_info", "w", offset=t_ne_at(H, 1, 0)),
    R("byte_size_overflow", lambda: gguf(1, 0).tensor_info("w", [1 << 62], f32, 0), "size_overflow", "tensor_info",
      "w", offset=t_ne_at(H, 1, 0)),
    R("byte_size_overflow_in_the_last_product", lambda: gguf(1, 0).tensor_info("w", [1, 1, 1, 1 << 62], f32, 0),
      "size_overflow", "tensor_info", "w", offset=t_ne_at(H, 1, 0)),
    R("stride_overflow_with_a_zero_dimension", lambda: gguf(1, 0).tensor_info("w", [1 << 31, 1 << 31, 0], f32, 0),
      "size_overflow", "tensor_info", "w", offset=t_ne_at(H, 1, 0)),
    R("element_count_prefix_overflow_before_a_zero_dimension",
      lambda: gguf(1, 0).tensor_info("w", [1 << 40, 1 << 40, 0], f32, 0), "shape_overflow", "tensor_info", "w",
      offset=t_ne_at(H, 1, 0)),
    R("offset_plus_size_overflow", lambda: gguf(1, 0).tensor_info("w", [(1 << 62) - 16], f32, 0), "data_truncated",
      "data", "w", offset=H + t_size(1, 1), expected=u64max, found=H + t_size(1, 1)),
    R("padded_sum_overflow",
      lambda: gguf(2, 0).tensor_info("a", [1 << 61], f32, 0).tensor_info("b", [1 << 61], f32, p63),
      "data_size_overflow", "tensor_info", "b", offset=t_offset_at(H + t_size(1, 1), 1, 1), expected=p63, found=p63),
    R("alignment_padding_overflow",
      lambda: gguf(1, 1).kv_u32("general.alignment", 1 << 31).tensor_info("w", [(1 << 62) - (1 << 28) + 1], f32, 0),
      "data_size_overflow", "tensor_info", "w", offset=t_offset_at(H + 8 + 17 + 4 + 4, 1, 1), expected=0,
      found=u64max - (1 << 30) + 5),

    # ======== USERS.md 3: values used as indices into fixed tables ========
    R("n_dims_5", lambda: gguf(1, 0).str("w").u32(5).zeros(40).u32(f32).u64(0), "bad_n_dims", "tensor_info", "w",
      offset=t_dims_at(H, 1), expected=4, found=5),
    R("n_dims_0xFFFFFFFF", lambda: gguf(1, 0).str("w").u32(0xFFFFFFFF).zeros(16), "bad_n_dims", "tensor_info", "w",
      offset=t_dims_at(H, 1), expected=4, found=0xFFFFFFFF),
    R("tensor_type_4_removed_q4_2", lambda: gguf(1, 0).tensor_info("w", [32], 4, 0), "removed_tensor_type",
      "tensor_info", "w", offset=t_type_at(H, 1, 1), found=4),
    R("tensor_type_31_removed_q4_0_4_4", lambda: gguf(1, 0).tensor_info("w", [32], 31, 0), "removed_tensor_type",
      "tensor_info", "w", offset=t_type_at(H, 1, 1), found=31),
    R("tensor_type_43", lambda: gguf(1, 0).tensor_info("w", [32], 43, 0), "bad_tensor_type", "tensor_info", "w",
      offset=t_type_at(H, 1, 1), found=43),
    R("tensor_type_0xFFFFFFFF", lambda: gguf(1, 0).tensor_info("w", [32], 0xFFFFFFFF, 0), "bad_tensor_type",
      "tensor_info", "w", offset=t_type_at(H, 1, 1), found=0xFFFFFFFF),
    R("negative_dimension", lambda: gguf(1, 0).tensor_info("w", [4, -(2**63)], f32, 0), "bad_dim", "tensor_info",
      "w", offset=t_ne_at(H, 1, 1), expected=1, found=p63),
    R("row_not_a_block_multiple", lambda: gguf(1, 0).tensor_info("w", [33], q4_0, 0), "not_block_multiple",
      "tensor_info", "w", offset=t_ne_at(H, 1, 0), expected=32, found=33),

    # ======== USERS.md 4: tensor data outside the file, or overlapping ========
    R("tensor_data_past_end_of_file", lambda: gguf(1, 0).tensor_info("w", [64], f32, 0).pad(32).zeros(100),
      "data_truncated", "data", "w", offset=64, expected=64 + 256, found=64 + 100),
    R("data_section_starts_past_end_of_file", lambda: gguf(1, 0).tensor_info("w", [4], f32, 0), "data_truncated",
      "data", "w", offset=H + t_size(1, 1), expected=64 + 16, found=H + t_size(1, 1)),
    R("second_tensor_past_end_of_file",
      lambda: gguf(2, 0).tensor_info("a", [8], f32, 0).tensor_info("b", [8], f32, 32).pad(32).zeros(40),
      "data_truncated", "data", "b", offset=96 + 32, expected=96 + 64, found=96 + 40),
    R("overlapping_tensors",
      lambda: gguf(2, 0).tensor_info("a", [8], f32, 0).tensor_info("b", [8], f32, 16).pad(32).zeros(64),
      "offset_mismatch", "tensor_info", "b", offset=t_offset_at(H + t_size(1, 1), 1, 1), expected=32, found=16),
    R("gap_between_tensors",
      lambda: gguf(2, 0).tensor_info("a", [8], f32, 0).tensor_info("b", [8], f32, 64).pad(32).zeros(96),
      "offset_mismatch", "tensor_info", "b", offset=t_offset_at(H + t_size(1, 1), 1, 1), expected=32, found=64),

    # ======== USERS.md 5: nested arrays ========
    R("nested_array", lambda: gguf(0, 1).kv_array("n", ARRAY, 1).type(U8).u64(0), "nested_array", "metadata", "n",
      offset=kv_value_at(H, 1)),

    # ======== USERS.md 6: type confusion; general.alignment of the wrong type or value ========
    R("alignment_type_u64", lambda: gguf(0, 1).kv_u64("general.alignment", 32), "alignment_wrong_type", "metadata",
      "general.alignment", offset=H, expected=U32, found=U64),
    R("alignment_type_i32", lambda: gguf(0, 1).kv_i32("general.alignment", 32), "alignment_wrong_type", "metadata",
      "general.alignment", offset=H, expected=U32, found=I32),
    R("alignment_type_string", lambda: gguf(0, 1).kv_str("general.alignment", "32"), "alignment_wrong_type",
      "metadata", "general.alignment", offset=H, expected=U32, found=STRING),
    R("alignment_type_array", lambda: gguf(0, 1).kv_array("general.alignment", U32, 1).u32(32),
      "alignment_wrong_type", "metadata", "general.alignment", offset=H, expected=U32, found=ARRAY),
    R("alignment_0", lambda: gguf(0, 1).kv_u32("general.alignment", 0), "bad_alignment", "metadata",
      "general.alignment", offset=H, found=0),
    R("alignment_3", lambda: gguf(0, 1).kv_u32("general.alignment", 3), "bad_alignment", "metadata",
      "general.alignment", offset=H, found=3),
    R("alignment_48", lambda: gguf(0, 1).kv_u32("general.alignment", 48), "bad_alignment", "metadata",
      "general.alignment", offset=H, found=48),
    R("bool_byte_2", lambda: gguf(0, 1).key("b", BOOL).u8(2), "bad_bool", "metadata", "b",
      offset=kv_value_at(H, 1), expected=1, found=2),
    R("bool_array_byte_2", lambda: gguf(0, 1).kv_array("b", BOOL, 3).u8(1).u8(0).u8(2), "bad_bool", "metadata",
      "b", offset=kv_value_at(H, 1) + 12 + 2, expected=1, found=2),
    R("value_type_13", lambda: gguf(0, 1).str("k").u32(13).u8(0), "bad_value_type", "metadata", "k",
      offset=kv_type_at(H, 1), found=13),
    R("value_type_0xFFFFFFFF", lambda: gguf(0, 1).str("k").u32(0xFFFFFFFF).u8(0), "bad_value_type", "metadata",
      "k", offset=kv_type_at(H, 1), found=0xFFFFFFFF),
    R("array_element_type_13", lambda: gguf(0, 1).key("k", ARRAY).u32(13).u64(1).u8(0), "bad_value_type",
      "metadata", "k", offset=kv_value_at(H, 1), found=13),
    R("array_element_type_0xFFFFFFFF", lambda: gguf(0, 1).key("k", ARRAY).u32(0xFFFFFFFF).u64(1).u8(0),
      "bad_value_type", "metadata", "k", offset=kv_value_at(H, 1), found=0xFFFFFFFF),

    # ======== names: empty, too long, duplicate, holding a NUL ========
    R("empty_key", lambda: gguf(0, 2).kv_u8("a", 1).kv_u32("", 2), "empty_key", "metadata", offset=H + 14),
    R("duplicate_key",
      lambda: gguf(0, 3).kv_u8("general.name", 1).kv_u8("b", 2).kv_str("general.name", "x"), "duplicate_key",
      "metadata", "general.name", offset=H + (8 + 12 + 4 + 1) + 14, expected=0, found=2),
    R("nul_inside_a_key", lambda: gguf(0, 1).kv_u32("general.alignment\0", 64), "nul_in_name", "metadata",
      "general.alignment\0", offset=H + 8 + 17, found=17),
    R("empty_tensor_name", lambda: gguf(1, 0).tensor_info("", [4], f32, 0), "bad_name_length", "tensor_info",
      offset=H, expected=63, found=0),
    R("tensor_name_64_bytes", lambda: gguf(1, 0).tensor_info("n" * 64, [4], f32, 0), "bad_name_length",
      "tensor_info", "n" * 64, offset=H, expected=63, found=64),
    R("duplicate_tensor_name",
      lambda: gguf(3, 0).tensor_info("a", [8], f32, 0).tensor_info("b", [8], f32, 32).tensor_info("a", [8], f32, 64),
      "duplicate_tensor", "tensor_info", "a", offset=H + 2 * t_size(1, 1), expected=0, found=2),
    R("nul_inside_a_tensor_name", lambda: gguf(1, 0).tensor_info("w\0x", [4], f32, 0), "nul_in_name",
      "tensor_info", "w\0x", offset=H + 8 + 1, found=1),

    # ======== versions and magic: real user mistakes ========
    R("version_0", lambda: version(0), "bad_version", "header", offset=4, expected=3, found=0),
    R("version_1", lambda: version(1), "version_unsupported", "header", offset=4, expected=3, found=1),
    R("version_4", lambda: version(4), "version_too_new", "header", offset=4, expected=3, found=4),
    R("version_0x03000000_byte_swapped", lambda: version(0x03000000), "byte_swapped", "header", offset=4,
      expected=3, found=0x03000000),
    R("magic_html_page",
      lambda: G().raw("<!DOCTYPE html>\n<html><head><title>404 Not Found</title></head></html>\n"),
      "bad_magic", "header", offset=0, expected=0x46554747, found=0x4F44213C),
    R("magic_zip_archive", lambda: G().raw("PK\x03\x04").put("H", 20).zeros(26).raw("pytorch_model/data.pkl"),
      "bad_magic", "header", offset=0, expected=0x46554747, found=0x04034B50),
    R("magic_old_ggjt_file", lambda: G().u32(0x67676A74).u32(3).zeros(32), "bad_magic", "header", offset=0,
      expected=0x46554747, found=0x67676A74),

    # ======== a fixed-size field cut short ========
    R("truncated_in_the_version", lambda: G().magic().put("H", 3), "truncated", "header", offset=4, expected=4,
      found=2),
    R("truncated_in_a_scalar_value", lambda: gguf(0, 1).key("x", U64).u32(7), "truncated", "metadata", "x",
      offset=kv_value_at(H, 1), expected=8, found=4),
    R("truncated_in_a_tensor_offset", lambda: gguf(1, 0).str("w").u32(1).i64(4).u32(f32), "truncated",
      "tensor_info", "w", offset=t_offset_at(H, 1, 1), expected=8, found=0),
]

IO_CODES = {"io_error", "split_part_missing", "out_of_memory"}
# Codes the C++ table says every open error can have (CorruptionTable.EveryOpenErrorCodeHasARow).
OPEN_CODES = {r.code for r in TABLE}


def subject_ok(got, want) -> bool:
    if want is NONE:
        return got is None
    return got == want  # as stored: a NUL inside a name stays a NUL


def check_error(e: GGUFError, row: Row, path: str):
    cls = GGUFIOError if row.code in IO_CODES else InvalidFileError
    assert type(e) is cls, (row.name, type(e))
    assert e.code == row.code, (row.name, e.code)
    assert e.section == row.where, (row.name, e.section)
    assert subject_ok(e.subject, row.subject), (row.name, e.subject)
    if row.offset is not None:
        assert e.offset == row.offset, (row.name, e.offset, row.offset)
    if row.expected is not None:
        assert e.expected == row.expected, (row.name, e.expected, row.expected)
    if row.found is not None:
        assert e.found == row.found, (row.name, e.found, row.found)
    assert e.file == path
    assert e.part is None and e.n_parts is None
    assert e.exit_code == 1
    assert str(e).endswith(f"[{row.code}]") and str(e).startswith(path)
    assert isinstance(e, ValueError)


def test_table_is_the_cpp_table():
    """Every row name of test_corruption.cpp's single-file rows is here (the table cannot drift)."""
    src = Path(__file__).resolve().parents[2] / "tests" / "unit" / "test_corruption.cpp"
    if not src.exists():
        pytest.skip("tests/unit/test_corruption.cpp is not beside this file")
    names = re.findall(r'\.name = "([A-Za-z0-9_]+)",\s*\n?\s*\.make', src.read_text())
    names += re.findall(r'\.name = "([A-Za-z0-9_]+)",\s*//[^\n]*\n\s*\.make', src.read_text())
    ours = [r.name for r in TABLE]
    assert len(set(ours)) == len(ours)
    assert sorted(set(names)) == sorted(ours)


@pytest.mark.parametrize("row", TABLE, ids=[r.name for r in TABLE])
def test_corruption_row(row: Row, tmp_path: Path):
    b = row.make().b
    path = tmp_path / "damaged.gguf"
    path.write_bytes(b)
    for mmap in (True, False):
        with pytest.raises(GGUFError) as ei:
            minfer.open(path, mmap=mmap)
        check_error(ei.value, row, str(path))


def cli_dir_verdicts(cli: Path, d: Path) -> dict:
    """`minfer info DIR --json`: file name -> (error code or None, the library's message), for
    every file of the directory in one process."""
    r = subprocess.run([str(cli), "info", str(d), "--json"], capture_output=True)
    assert r.returncode == 2, r.stderr  # a directory: nothing chosen
    doc = json.loads(r.stdout)
    return {c["name"]: (c["error"], c.get("message")) for c in doc["candidates"]}


def test_corruption_rows_match_the_cli(tmp_path: Path, minfer_cli: Path):
    """The same code and message as the tool for every row (`minfer info DIR --json`, one process)."""
    for i, row in enumerate(TABLE):
        (tmp_path / f"row{i:03d}.gguf").write_bytes(row.make().b)
    verdicts = cli_dir_verdicts(minfer_cli, tmp_path)
    assert len(verdicts) == len(TABLE)
    for i, row in enumerate(TABLE):
        with pytest.raises(GGUFError) as ei:
            minfer.open(tmp_path / f"row{i:03d}.gguf")
        assert verdicts[f"row{i:03d}.gguf"] == (row.code, str(ei.value)), row.name


# ---- split sets ------------------------------------------------------------------------------------

def split_name(i: int, n: int) -> str:
    return f"m-{i + 1:05d}-of-{n:05d}.gguf"


def write_parts(d: Path, n: int, tweak=None) -> Path:
    """Parts as llama-gguf-split writes them: u16 split.no, u16 split.count, i32 split.tensors.count,
    then one f32 tensor t<i> of 2 values. tweak(kvs, tensors, i) may change part i."""
    for i in range(n):
        kvs = [["split.no", gb.U16, i], ["split.count", gb.U16, n], ["split.tensors.count", gb.I32, n]]
        tensors = [(f"t{i}", [2], 0, random.Random(i).randbytes(8))]
        if tweak:
            tweak(kvs, tensors, i)
        (d / split_name(i, n)).write_bytes(gb.gguf([tuple(k) for k in kvs], tensors))
    return d / split_name(0, n)


def set_kv(kvs, key, vtype, value):
    for k in kvs:
        if k[0] == key:
            k[1], k[2] = vtype, value
            return
    kvs.append([key, vtype, value])


def erase_kv(kvs, key):
    kvs[:] = [k for k in kvs if k[0] != key]


def _missing(d):
    e = write_parts(d, 3)
    os.remove(d / split_name(2, 3))
    return e


def _renamed(d):
    e = write_parts(d, 2)
    os.rename(e, d / "model.gguf")
    return d / "model.gguf"


def _html_part2(d):
    e = write_parts(d, 2)
    (d / split_name(1, 2)).write_bytes(b"<!DOCTYPE html><html><body>rate limited</body></html>\n")
    return e


def _cut_part2(d):
    e = write_parts(d, 2)
    p = d / split_name(1, 2)
    b = p.read_bytes()
    # part 2's head: 3 KVs and one tensor record, padded to 32; t1's 8 bytes follow; keep 7
    head = len(gb.gguf([("split.no", gb.U16, 1), ("split.count", gb.U16, 2), ("split.tensors.count", gb.I32, 2)],
                       [("t1", [2], 0, b"")]))
    p.write_bytes(b[:head + 7])
    return e


def _later_part(d):
    write_parts(d, 2)
    return d / split_name(1, 2)


def _dup(kvs, tensors, i):
    set_kv(kvs, "split.tensors.count", gb.I32, 3)
    if i == 1:
        tensors.append(("t0", [2], 0, random.Random(7).randbytes(8)))


SPLIT_NO_AT = H
SPLIT_COUNT_AT = SPLIT_NO_AT + 22
SPLIT_TENSORS_COUNT_AT = SPLIT_COUNT_AT + 25

# (name, entry maker, code, section, subject, part, offset, expected, found)
SPLIT_ROWS = [
    ("split_part_missing", _missing, "split_part_missing", "split", NONE, 3, None, None, None),
    ("split_no_mismatch", lambda d: write_parts(d, 2, lambda k, t, i: i == 1 and set_kv(k, "split.no", gb.U16, 0)),
     "split_no_mismatch", "split", NONE, 2, None, 1, 0),
    ("split_count_disagrees_with_the_file_name",
     lambda d: write_parts(d, 2, lambda k, t, i: i == 0 and set_kv(k, "split.count", gb.U16, 3)),
     "split_count_mismatch", "split", NONE, 1, None, 2, 3),
    ("split_count_disagrees_with_part_1",
     lambda d: write_parts(d, 2, lambda k, t, i: i == 1 and set_kv(k, "split.count", gb.U16, 1)),
     "split_count_mismatch", "split", NONE, 2, None, 2, 1),
    ("split_tensor_count_mismatch",
     lambda d: write_parts(d, 2, lambda k, t, i: i == 0 and set_kv(k, "split.tensors.count", gb.I32, 3)),
     "split_tensor_count_mismatch", "split", NONE, 1, SPLIT_TENSORS_COUNT_AT, 3, 2),
    ("split_duplicate_tensor", lambda d: write_parts(d, 2, _dup), "split_duplicate_tensor", "split", "t0", 2, None,
     1, 2),
    ("split_not_first", _later_part, "split_not_first", "split", NONE, 2, SPLIT_NO_AT, 0, 1),
    ("split_bad_key_string_split_no",
     lambda d: write_parts(d, 2, lambda k, t, i: i == 1 and set_kv(k, "split.no", gb.STRING, "1")),
     "split_bad_key", "split", "split.no", 2, SPLIT_NO_AT, None, None),
    ("split_bad_key_negative_split_count",
     lambda d: write_parts(d, 2, lambda k, t, i: i == 1 and set_kv(k, "split.count", gb.I32, -2)),
     "split_bad_key", "split", "split.count", 2, SPLIT_COUNT_AT, None, None),
    ("split_bad_key_missing_split_count_in_part_2",
     lambda d: write_parts(d, 2, lambda k, t, i: i == 1 and erase_kv(k, "split.count")),
     "split_bad_key", "split", "split.count", 2, None, None, None),
    ("split_arch_mismatch",
     lambda d: write_parts(d, 2, lambda k, t, i: set_kv(k, "general.architecture", gb.STRING,
                                                       "llama" if i == 0 else "qwen2")),
     "split_arch_mismatch", "split", "general.architecture", 2, None, None, None),
    ("split_bad_name", _renamed, "split_bad_name", "split", NONE, 1, None, 2, 0),
    ("split_bad_key_missing_tensor_count",
     lambda d: write_parts(d, 2, lambda k, t, i: i == 0 and erase_kv(k, "split.tensors.count")),
     "split_bad_key", "split", "split.tensors.count", 1, None, None, None),
    ("split_part_2_data_truncated", _cut_part2, "data_truncated", "data", "t1", 2, None, None, None),
    ("split_part_2_is_an_html_page", _html_part2, "bad_magic", "header", NONE, 2, 0, 0x46554747, 0x4F44213C),
]


def test_split_table_is_the_cpp_table():
    src = Path(__file__).resolve().parents[2] / "tests" / "unit" / "test_corruption.cpp"
    if not src.exists():
        pytest.skip("tests/unit/test_corruption.cpp is not beside this file")
    names = set(re.findall(r'\{\.name = "(split_[A-Za-z0-9_]+)"', src.read_text()))
    assert names == {r[0] for r in SPLIT_ROWS}


@pytest.mark.parametrize("row", SPLIT_ROWS, ids=[r[0] for r in SPLIT_ROWS])
def test_split_row(row, tmp_path: Path, minfer_cli: Path):
    name, make, code, where, subject, part, offset, expected, found = row
    entry = make(tmp_path)
    with pytest.raises(GGUFError) as ei:
        minfer.open(entry)
    e = ei.value
    cls = GGUFIOError if code in IO_CODES else InvalidFileError
    assert type(e) is cls, type(e)
    assert (e.code, e.section) == (code, where)
    assert subject_ok(e.subject, subject), e.subject
    assert e.part == part, e.part
    assert e.n_parts is not None and e.n_parts > 1
    assert e.file.startswith(str(tmp_path) + "/"), e.file
    if offset is not None:
        assert e.offset == offset
    if expected is not None:
        assert e.expected == expected
    if found is not None:
        assert e.found == found
    # the tool says the same, with the same exit code
    r = subprocess.run([str(minfer_cli), "info", str(entry)], capture_output=True)
    line = r.stderr.decode("utf-8", "surrogateescape").strip().splitlines()[-1]
    assert r.returncode == e.exit_code == (3 if cls is GGUFIOError else 1)
    assert line.endswith(str(e)) and line.endswith(f"[{code}]")


# ---- truncations and byte flips of valid files -----------------------------------------------------

def every_type_file() -> bytes:
    """A small valid file with a value of every type, arrays of every element type, and tensors."""
    rnd = random.Random(1)
    kvs = [("general.architecture", gb.STRING, "llama"), ("u8", gb.U8, 200), ("i8", gb.I8, -100),
           ("u16", gb.U16, 60000), ("i16", gb.I16, -30000), ("u32", gb.U32, 4000000000),
           ("i32", gb.I32, -2000000000), ("f32", gb.F32, 1.5), ("bool", gb.BOOL, 1), ("s", gb.STRING, "h\u00e9llo"),
           ("u64", gb.U64, 2**64 - 1), ("i64", gb.I64, -2**63), ("f64", gb.F64, -0.25),
           ("a.u8", gb.ARRAY, (gb.U8, [1, 2, 3])), ("a.i32", gb.ARRAY, (gb.I32, [-1, 0, 1])),
           ("a.f32", gb.ARRAY, (gb.F32, [0.5, -2.0])), ("a.bool", gb.ARRAY, (gb.BOOL, [0, 1, 1])),
           ("a.str", gb.ARRAY, (gb.STRING, ["a", "", "\u00fc", "xyz"])), ("a.u64", gb.ARRAY, (gb.U64, [7])),
           ("a.f64", gb.ARRAY, (gb.F64, [])), ("a.empty_str", gb.ARRAY, (gb.STRING, []))]
    tensors = [("w.f32", [8, 2], 0, rnd.randbytes(64)), ("w.q4_0", [64], 2, rnd.randbytes(36)),
               ("w.q8_0", [32, 2], 8, rnd.randbytes(68)), ("w.f16", [4], 1, rnd.randbytes(8))]
    return gb.gguf(kvs, tensors)


def read_everything(model) -> None:
    """Touch every value a model gives; any library error must be a GGUFError."""
    for p in model.parts:
        assert p.data.nbytes == p.file_size
        bytes(p.data[-64:])
    md = model.metadata
    for k in md:
        v = md[k]
        r = md.raw(k)
        _ = (r.type, r.element_type, r.count, r.offset, r.value_offset, bytes(r.data))
        if isinstance(v, np.ndarray):
            v.sum()
        elif isinstance(v, minfer.StringArray):
            v.to_list()
            for i in range(min(len(v), 3)):
                v.bytes_at(i)
    for name in model.tensors:
        t = model.tensors[name]
        _ = (t.type, t.shape, t.numpy_shape, t.n_bytes, t.offset, t.part, t.strides, t.info_offset)
        bytes(t.data)
        if minfer.can_dequantize(int(t.type)) and t.n_elements <= (1 << 22):
            t.to_numpy()


def head_size(data: bytes) -> int:
    """The data section's offset of a file written by gb.gguf (read from our own layout)."""
    import io
    f = io.BytesIO(data)
    f.read(8)
    n_t, n_kv = struct.unpack("<QQ", f.read(16))

    def skip_value(t):
        if t == gb.STRING:
            (n,) = struct.unpack("<Q", f.read(8))
            f.read(n)
        elif t == gb.ARRAY:
            et, n = struct.unpack("<IQ", f.read(12))
            for _ in range(n):
                skip_value(et)
        else:
            f.read(struct.calcsize(gb._FMT[t]))
    for _ in range(n_kv):
        (kl,) = struct.unpack("<Q", f.read(8))
        f.read(kl)
        (t,) = struct.unpack("<I", f.read(4))
        skip_value(t)
    for _ in range(n_t):
        (nl,) = struct.unpack("<Q", f.read(8))
        f.read(nl)
        (nd,) = struct.unpack("<I", f.read(4))
        f.read(8 * nd + 12)
    return gb.pad(f.tell(), 32)


def test_every_type_file_is_valid(tmp_path: Path):
    p = tmp_path / "ok.gguf"
    data = every_type_file()
    p.write_bytes(data)
    with minfer.open(p) as m:
        assert m.parts[0].data_offset == head_size(data)
        assert len(m.metadata) == 21 and len(m.tensors) == 4
        read_everything(m)


@pytest.mark.parametrize("which", ["every_type", "sample"])
def test_truncated_at_every_byte_of_the_head(which, tmp_path: Path, sample_model: Path, minfer_cli: Path):
    data = every_type_file() if which == "every_type" else sample_model.read_bytes()
    p = tmp_path / "cut.gguf"
    p.write_bytes(data)
    with minfer.open(p) as m:
        head = m.parts[0].data_offset
        first_tensor_end = min(m.tensors[n].offset + m.tensors[n].n_bytes for n in m.tensors)
    codes = {}
    # every byte of the head; for the sample's 13 KiB head, every byte of its first and last KiB
    # (header, first records, tensor table) and every fifth byte between (the vocabulary)
    cuts = range(0, head + 1) if which == "every_type" else \
        sorted(set(range(0, 1024)) | set(range(head - 1024, head + 1)) | set(range(0, head + 1, 5)))
    for L in cuts:
        p.write_bytes(data[:L])
        try:
            m = minfer.open(p)
        except GGUFError as e:
            assert type(e) is InvalidFileError, (L, type(e), e)
            assert e.offset <= (head if e.code == "data_truncated" else L), (L, e.offset, str(e))
            codes.setdefault(e.code, L)
            continue
        pytest.fail(f"a file cut at {L} of {len(data)} bytes opened")
    assert codes.get("truncated") == 0
    assert "data_truncated" in codes
    # A cut inside the data: data_truncated, naming the tensor that is cut.
    p.write_bytes(data[:first_tensor_end - 1])
    with pytest.raises(InvalidFileError) as ei:
        minfer.open(p)
    assert ei.value.code == "data_truncated"
    # A sample of the cuts (every code's first cut, and 200 more) says exactly what the tool says.
    d = tmp_path / "cuts"
    d.mkdir()
    sample = sorted(set(codes.values()) | set(range(0, head + 1, max(1, head // 200))))
    for L in sample:
        (d / f"cut{L:06d}.gguf").write_bytes(data[:L])
    verdicts = cli_dir_verdicts(minfer_cli, d)
    for L in sample:
        with pytest.raises(GGUFError) as ei:
            minfer.open(d / f"cut{L:06d}.gguf")
        assert verdicts[f"cut{L:06d}.gguf"] == (ei.value.code, str(ei.value)), L


@pytest.mark.parametrize("which", ["every_type", "sample"])
def test_random_byte_flips(which, tmp_path: Path, sample_model: Path):
    rnd = random.Random(20261204 if which == "every_type" else 13)
    data = every_type_file() if which == "every_type" else sample_model.read_bytes()
    p = tmp_path / "flip.gguf"
    p.write_bytes(data)
    with minfer.open(p) as m:
        head = m.parts[0].data_offset
    trials = 1500 if which == "every_type" else 600
    opened = refused = 0
    for trial in range(trials):
        b = bytearray(data)
        for _ in range(rnd.choice((1, 1, 2, 3, 8))):
            at = rnd.randrange(head if rnd.random() < 0.9 else len(b))
            b[at] = rnd.choice((rnd.randrange(256), b[at] ^ (1 << rnd.randrange(8)), 0, 0xFF))
        p.write_bytes(bytes(b))
        try:
            with minfer.open(p, mmap=bool(trial % 2)) as m:
                read_everything(m)
            opened += 1
        except GGUFError as e:
            assert isinstance(e, (InvalidFileError, RequestError, GGUFIOError)), type(e)
            assert e.code and e.code != "unknown", e
            refused += 1
    assert opened + refused == trials
    assert refused > trials // 10 and opened > 0, (opened, refused)


# ---- wrong Python types ----------------------------------------------------------------------------

class Weird:
    pass


WRONG = [None, 1.5, Weird(), [1], {"a": 1}]


def test_wrong_types_to_module_functions(sample_model: Path):
    for bad in WRONG:
        with pytest.raises(TypeError):
            minfer.open(bad)
        with pytest.raises(TypeError):
            minfer.tensor_type_name(bad if bad is not None else "x")
        with pytest.raises(TypeError):
            minfer.type_block(bad if bad is not None else "x")
        with pytest.raises(TypeError):
            minfer.can_dequantize(bad if bad is not None else "x")
        with pytest.raises(TypeError):
            minfer.dequantize(bad, 0)
    with pytest.raises(TypeError):
        minfer.open(123)
    with pytest.raises(TypeError):
        minfer.open(sample_model, mmap=Weird())
    with pytest.raises(TypeError):
        minfer.open(sample_model, max_fetch="lots")
    with pytest.raises(TypeError):
        minfer.open(sample_model, timeout="soon")
    with pytest.raises(TypeError):
        minfer.open(sample_model, True)  # mmap is keyword-only
    with pytest.raises(TypeError):
        minfer.dequantize(b"\0" * 18, "q4_0")
    with pytest.raises(TypeError):
        minfer.dequantize(b"\0" * 18, 2, threads="all")
    with pytest.raises(TypeError):
        minfer.active_isa(1)


def test_wrong_types_to_methods(sample_model: Path):
    with minfer.open(sample_model) as m:
        md, ts = m.metadata, m.tensors
        for bad in (1, 1.5, None, Weird()):
            with pytest.raises((TypeError, KeyError)):
                md[bad]
            with pytest.raises(TypeError):
                md.raw(bad)
            if not isinstance(bad, int):  # an int is a position in file order (IndexError past the end)
                with pytest.raises((TypeError, KeyError)):
                    ts[bad]
            assert bad not in md and bad not in ts
        for bad in (len(ts), -len(ts) - 1, 2**70):
            with pytest.raises(IndexError):
                ts[bad]
        toks = md["tokenizer.ggml.tokens"]
        for bad in ("1", 1.5, None, Weird()):
            with pytest.raises(TypeError):
                toks[bad]
            with pytest.raises(TypeError):
                toks.bytes_at(bad)
        for bad in (len(toks), -len(toks) - 1, 2**70, -(2**70)):
            with pytest.raises(IndexError):
                toks[bad]
            with pytest.raises(IndexError):
                toks.bytes_at(bad)
        t = ts["token_embd.weight"]
        with pytest.raises(TypeError):
            t.to_numpy(threads="many")
        with pytest.raises(TypeError):
            t.to_numpy(np.float32, 4)  # threads is keyword-only
        for bad in ("int32", np.int8, "complex64"):
            with pytest.raises((TypeError, ValueError)):
                t.to_numpy(bad)
        with pytest.raises(KeyError):
            md["no.such.key"]
        with pytest.raises(KeyError):
            md.raw("no.such.key")
        with pytest.raises(KeyError):
            ts["no.such.tensor"]
        with pytest.raises(AttributeError):
            m.metadata = {}
        with pytest.raises(TypeError):
            md["general.name"] = "x"
        with pytest.raises(ValueError):
            t.data[0] = 1  # read-only view
        with pytest.raises(TypeError):
            m.close(1)


def test_toolbox_wrong_types(tmp_path: Path):
    for fn in (minfer.edit, minfer.split, minfer.merge, minfer.hash, minfer.verify, minfer.estimate, minfer.diff,
               minfer.quantize):
        with pytest.raises(TypeError):
            fn(Weird())


def test_dequantize_wrong_sizes():
    with pytest.raises(RequestError) as ei:
        minfer.dequantize(b"\0" * 17, 2)
    assert ei.value.code == "buffer_size_mismatch"
    with pytest.raises(RequestError) as ei:
        minfer.dequantize(b"\0" * 36, 9)  # q8_1: ggml has no conversion either
    assert ei.value.code == "type_not_convertible"
    for t in (4, 43, 1000, -1):
        with pytest.raises((RequestError, ValueError, OverflowError, TypeError)):
            minfer.dequantize(b"\0" * 32, t)


# ---- closed models and the lifetime of views -------------------------------------------------------

def test_closed_model(sample_model: Path):
    m = minfer.open(sample_model)
    md, ts = m.metadata, m.tensors
    t = ts["token_embd.weight"]
    ids = md["tokenizer.ggml.token_type"]
    raw = md.raw("tokenizer.ggml.token_type").data
    data = t.data
    ids_copy, raw_copy, data_copy = ids.copy(), raw.copy(), data.copy()
    toks = md["tokenizer.ggml.tokens"]
    first = toks[0]
    m.close()
    assert m.closed
    m.close()  # twice is fine
    for get in (lambda: m.metadata, lambda: m.tensors, lambda: m.parts, lambda: m.file_bytes,
                lambda: md["general.name"], lambda: md.raw("general.name"), lambda: len(md), lambda: list(md),
                lambda: ts["token_embd.weight"], lambda: len(ts), lambda: list(ts), lambda: t.data,
                lambda: t.to_numpy()):
        with pytest.raises(ValueError) as ei:
            get()
        assert "closed" in str(ei.value)
    # A string array and a tensor taken before close are accessors too (docs/PYTHON.md).
    assert isinstance(first, str)
    for get in (lambda: toks[0], lambda: len(toks), lambda: toks.to_list(), lambda: list(toks),
                lambda: toks.bytes_at(0), lambda: t.type, lambda: t.name, lambda: t.shape):
        with pytest.raises(ValueError):
            get()
    # Views taken before close still read their bytes.
    assert np.array_equal(ids, ids_copy) and np.array_equal(raw, raw_copy) and np.array_equal(data, data_copy)
    del m, md, ts, t
    gc.collect()
    assert np.array_equal(ids, ids_copy) and np.array_equal(raw, raw_copy) and np.array_equal(data, data_copy)
    assert int(data.astype(np.uint64).sum()) == int(data_copy.astype(np.uint64).sum())


def test_views_outlive_the_model_without_close(sample_model: Path):
    def views():
        m = minfer.open(sample_model)
        t = m.tensors["blk.0.attn_q.weight"]
        return t.data, m.metadata["tokenizer.ggml.token_type"], bytes(t.data)
    data, ids, want = views()
    gc.collect()
    assert data.tobytes() == want
    assert ids.shape == (512,)
    sub = data[5:20]
    del data
    gc.collect()
    assert sub.tobytes() == want[5:20]


def test_context_manager_closes(sample_model: Path):
    with minfer.open(sample_model) as m:
        d = m.tensors["token_embd.weight"].data
    assert m.closed
    with pytest.raises(ValueError):
        m.metadata
    assert d.shape == (18432,)
    d.sum()
    # an exception inside the block closes it too
    with pytest.raises(RuntimeError):
        with minfer.open(sample_model) as m2:
            raise RuntimeError("x")
    assert m2.closed


def test_missing_and_odd_paths(tmp_path: Path):
    with pytest.raises(GGUFIOError) as ei:
        minfer.open(tmp_path / "nope.gguf")
    assert ei.value.code == "io_error" and ei.value.errno == 2
    with pytest.raises(GGUFIOError) as ei:
        minfer.open(tmp_path)
    assert ei.value.code == "io_error"
    os.mkfifo(tmp_path / "pipe.gguf")
    with pytest.raises(GGUFIOError) as ei:
        minfer.open(tmp_path / "pipe.gguf")
    assert ei.value.code == "io_error"
    (tmp_path / "empty.gguf").write_bytes(b"")
    with pytest.raises(InvalidFileError) as ei:
        minfer.open(tmp_path / "empty.gguf")
    assert ei.value.code == "truncated"
    with pytest.raises((ValueError, GGUFError)):
        minfer.open("bad\0path.gguf")


def test_damaged_later_part_of_a_split_set(tmp_path: Path, sample_model: Path, minfer_cli: Path):
    """Part 2 of a set made by `minfer split`, cut at every byte of its head and flipped at random:
    opening part 1 gives an error located at part 2 (or, for a flip that keeps part 2 valid, a set
    that reads in full); never a crash."""
    r = subprocess.run([str(minfer_cli), "split", str(sample_model), str(tmp_path / "s"), "--quiet",
                        "--split-max-tensors", "9"], capture_output=True)
    assert r.returncode == 0, r.stderr
    parts = sorted(tmp_path.glob("s-*-of-*.gguf"))
    assert len(parts) == 3
    part2 = parts[1]
    data = part2.read_bytes()
    with minfer.open(parts[0]) as m:
        head = m.parts[1].data_offset
        read_everything(m)
    for L in range(0, head + 1):
        part2.write_bytes(data[:L])
        with pytest.raises(GGUFError) as ei:
            minfer.open(parts[0])
        e = ei.value
        assert type(e) is InvalidFileError, (L, type(e), e)
        assert (e.part, e.n_parts, e.file) == (2, 3, str(part2)), (L, e.part, e.file)
    rnd = random.Random(77)
    opened = 0
    for trial in range(300):
        b = bytearray(data)
        for _ in range(rnd.choice((1, 2, 4))):
            at = rnd.randrange(head)
            b[at] = rnd.randrange(256)
        part2.write_bytes(bytes(b))
        try:
            with minfer.open(parts[0], mmap=bool(trial % 2)) as m:
                read_everything(m)
            opened += 1
        except GGUFError as e:
            assert isinstance(e, (InvalidFileError, GGUFIOError)), type(e)
            assert e.part in (1, 2), (e.part, str(e))  # split checks may name part 1 (counts)
    assert opened < 300
