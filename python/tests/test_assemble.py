"""minfer.assemble: mergekit configs (as a dict or a file) on GGUF models, through the same library
call as ``minfer assemble``; merged values against an independent numpy computation of mergekit's
formulas.

The models are written here with gguf_bytes.py (independent of minfer's writer): three llama-shaped
f32 models of 2 blocks with random weights, so a merge's output is f32 and comparable value by value
(the merge is computed in double and rounded once; numpy in float64, rounded to float32 the same way).
llama.cpp's view of assembled files is tested in C++ (tests/toolbox: stacks, recipes).
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import minfer
from minfer.errors import GGUFError, RequestError
from minfer.types import TensorType

sys.path.insert(0, str(Path(__file__).parent))
import gguf_bytes as gb  # noqa: E402

SHAPES = {"token_embd.weight": (64, 32), "output_norm.weight": (64,), "output.weight": (64, 32)}
for b in range(2):
    SHAPES.update({f"blk.{b}.attn_q.weight": (64, 64), f"blk.{b}.attn_norm.weight": (64,),
                   f"blk.{b}.ffn_up.weight": (64, 128), f"blk.{b}.ffn_down.weight": (128, 64)})


def write_model(path: Path, seed: int, name: str) -> dict:
    rng = np.random.default_rng(seed)
    values = {n: rng.standard_normal(int(np.prod(s))).astype(np.float32) for n, s in SHAPES.items()}
    kvs = [("general.architecture", gb.STRING, "llama"), ("general.name", gb.STRING, name),
           ("llama.block_count", gb.U32, 2), ("llama.embedding_length", gb.U32, 64),
           ("llama.feed_forward_length", gb.U32, 128), ("llama.attention.head_count", gb.U32, 4)]
    tensors = [(n, list(SHAPES[n]), 0, values[n].tobytes()) for n in SHAPES]
    path.write_bytes(gb.gguf(kvs, tensors))
    return values


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    d = tmp_path_factory.mktemp("assemble")
    return {k: (d / f"{k}.gguf", write_model(d / f"{k}.gguf", s, k)) for k, s in (("a", 1), ("b", 2), ("c", 3))}


def tensor(path: Path, name: str) -> np.ndarray:
    m = minfer.open(path)
    return np.frombuffer(bytes(m.tensors[name].data), dtype=np.float32).copy()


def test_linear_is_numpy(tmp_path, models):
    (pa, va), (pb, vb) = models["a"], models["b"]
    cfg = {"merge_method": "linear", "models": [{"model": str(pa), "parameters": {"weight": 0.3}},
                                                {"model": str(pb), "parameters": {"weight": 0.9}}]}
    r = minfer.assemble(cfg, tmp_path / "lin.gguf")
    assert r.written and r.method == "linear" and r.models == [str(pa), str(pb)]
    for n in SHAPES:
        want = ((0.3 * va[n].astype(np.float64) + 0.9 * vb[n].astype(np.float64)) / 1.2).astype(np.float32)
        got = tensor(tmp_path / "lin.gguf", n)
        np.testing.assert_array_max_ulp(got, want, maxulp=1)


def test_task_arithmetic_and_ties_are_numpy(tmp_path, models):
    (pa, va), (pb, vb), (pc, vc) = models["a"], models["b"], models["c"]
    cfg = {"merge_method": "task_arithmetic", "base_model": str(pa),
           "models": [{"model": str(pb), "parameters": {"weight": 0.5}}, {"model": str(pc), "parameters": {"weight": 0.25}}],
           "parameters": {"lambda": 0.8}}
    minfer.assemble(cfg, tmp_path / "ta.gguf")
    for n in SHAPES:
        a = va[n].astype(np.float64)
        db = (vb[n] - va[n]).astype(np.float64)  # mergekit: the delta in the tensors' dtype (f32)
        dc = (vc[n] - va[n]).astype(np.float64)
        want = (a + 0.8 * (0.5 * db + 0.25 * dc)).astype(np.float32)
        np.testing.assert_array_max_ulp(tensor(tmp_path / "ta.gguf", n), want, maxulp=1)

    cfg = {"merge_method": "ties", "base_model": str(pa),
           "models": [{"model": str(pb), "parameters": {"weight": 1.0, "density": 0.5}},
                      {"model": str(pc), "parameters": {"weight": 0.5, "density": 0.5}}]}
    minfer.assemble(cfg, tmp_path / "ties.gguf")
    for n in SHAPES:
        a = va[n].astype(np.float64)
        deltas, weights = [], [1.0, 0.5]
        for v in (vb[n], vc[n]):
            d = (v - va[n]).astype(np.float32)
            k = int(0.5 * d.size)
            order = np.argsort(-np.abs(d), kind="stable")  # the first in index order among equal magnitudes
            mask = np.zeros(d.size, dtype=bool)
            mask[order[:k]] = True
            deltas.append(np.where(mask, d, 0).astype(np.float64))
        wd = [w * d for w, d in zip(weights, deltas)]
        s = wd[0] + wd[1]
        majority = np.where(s >= 0, 1.0, -1.0)
        m = sum(np.where(np.sign(x) == majority, x, 0) for x in wd)
        den = sum(np.where(np.sign(x) == majority, w, 0) for x, w in zip(wd, weights))
        den = np.where(den == 0, 1.0, den)
        want = (a + m / den).astype(np.float32)
        np.testing.assert_array_max_ulp(tensor(tmp_path / "ties.gguf", n), want, maxulp=1)


def test_slerp_is_numpy(tmp_path, models):
    (pa, va), (pb, vb) = models["a"], models["b"]
    cfg = {"merge_method": "slerp", "base_model": str(pa),
           "models": [{"model": str(pa)}, {"model": str(pb)}], "parameters": {"t": 0.3}}
    minfer.assemble(cfg, tmp_path / "slerp.gguf")
    for n in SHAPES:
        v0, v1 = va[n].astype(np.float64), vb[n].astype(np.float64)
        n0, n1 = np.linalg.norm(v0), np.linalg.norm(v1)
        dot = np.sum((v0 / n0) * (v1 / n1))
        if abs(dot) > 0.9995:
            want = (0.7 * v0 + 0.3 * v1)
        else:
            th = np.arccos(dot)
            want = np.sin(th * 0.7) / np.sin(th) * v0 + np.sin(th * 0.3) / np.sin(th) * v1
        np.testing.assert_allclose(tensor(tmp_path / "slerp.gguf", n), want.astype(np.float32), rtol=1e-5, atol=1e-6)


def test_file_and_dict_give_the_same_bytes_as_the_command(tmp_path, models, minfer_cli):
    (pa, _), (pb, _) = models["a"], models["b"]
    yaml = (f"merge_method: passthrough\nslices:\n  - sources:\n      - model: {pa}\n        layer_range: [0, 1]\n"
            f"  - sources:\n      - model: {pb}\n        layer_range: [1, 2]\n")
    cfg = tmp_path / "stack.yaml"
    cfg.write_text(yaml)
    r = minfer.assemble(cfg, tmp_path / "py.gguf", provenance=False)
    assert r.blocks == 2
    subprocess.run([str(minfer_cli), "assemble", str(cfg), "-o", str(tmp_path / "cli.gguf"), "--no-provenance", "--quiet"],
                   check=True)
    assert (tmp_path / "py.gguf").read_bytes() == (tmp_path / "cli.gguf").read_bytes()
    d = minfer.assemble({"merge_method": "passthrough",
                         "slices": [{"sources": [{"model": str(pa), "layer_range": [0, 1]}]},
                                    {"sources": [{"model": str(pb), "layer_range": [1, 2]}]}]},
                        tmp_path / "dict.gguf", provenance=False)
    assert d.written
    assert (tmp_path / "dict.gguf").read_bytes() == (tmp_path / "py.gguf").read_bytes()
    # blk.1 of the output is b's blk.1, byte for byte
    out, b = minfer.open(tmp_path / "py.gguf"), minfer.open(pb)
    assert bytes(out.tensors["blk.1.ffn_up.weight"].data) == bytes(b.tensors["blk.1.ffn_up.weight"].data)


@pytest.mark.parametrize("cfg, code", [
    ({"merge_method": "dare_ties", "models": [{"model": "x.gguf"}]}, "unsupported_config"),
    ({"merge_method": "passthrough", "slices": "no"}, "bad_config"),
    ({"merge_method": "linear", "models": [{"model": "x.gguf"}], "unknown_key": 1}, "unsupported_config"),
])
def test_config_errors(tmp_path, cfg, code):
    with pytest.raises(RequestError) as e:
        minfer.assemble(cfg, tmp_path / "never.gguf")
    assert e.value.code == code
    assert e.value.exit_code == 2
    assert not (tmp_path / "never.gguf").exists()


def test_slerp_over_slices_with_a_gradient(tmp_path, models):
    """mergekit's gradient-slerp shape: slices of two sources, t a gradient over the layers. t is 0 at
    the slice's first layer and 1 at its last (position i / (n - 1)), and 0 for the tensors outside the
    layers (mergekit's planner): so blk.0 and the embeddings are a's exactly, blk.1 b's exactly."""
    (pa, va), (pb, vb) = models["a"], models["b"]
    cfg = {"merge_method": "slerp", "base_model": str(pa),
           "slices": [{"sources": [{"model": str(pa), "layer_range": [0, 2]}, {"model": str(pb), "layer_range": [0, 2]}]}],
           "parameters": {"t": [0, 1]}}
    r = minfer.assemble(cfg, tmp_path / "g.gguf")
    assert r.blocks == 2
    for n in SHAPES:
        want = vb[n] if n.startswith("blk.1.") else va[n]
        np.testing.assert_array_equal(tensor(tmp_path / "g.gguf", n), want)
    # and t = 0.5 everywhere against numpy's slerp
    cfg["parameters"] = {"t": 0.5}
    minfer.assemble(cfg, tmp_path / "h.gguf")
    for n in SHAPES:
        v0, v1 = va[n].astype(np.float64), vb[n].astype(np.float64)
        dot = np.sum((v0 / np.linalg.norm(v0)) * (v1 / np.linalg.norm(v1)))
        th = np.arccos(dot)
        want = (np.sin(th * 0.5) / np.sin(th) * (v0 + v1)).astype(np.float32)
        np.testing.assert_allclose(tensor(tmp_path / "h.gguf", n), want, rtol=1e-5, atol=1e-6)


def legacy_imatrix(path: Path, entries: dict) -> Path:
    """llama-imatrix's legacy .dat (test_quantize.py describes it): ncall 1, so the weights are exact."""
    out = [np.int32(len(entries)).tobytes()]
    for name, w in entries.items():
        out += [np.int32(len(name)).tobytes(), name.encode(), np.int32(1).tobytes(), np.int32(w.size).tobytes(),
                w.astype(np.float32).tobytes()]
    out += [np.int32(1).tobytes(), np.int32(4).tobytes(), b"test"]
    path.write_bytes(b"".join(out))
    return path


def test_merged_tensors_are_quantized_back_with_the_imatrix(tmp_path, models):
    """A merge of q4_0 models: each merged tensor is quantized back to q4_0 exactly as minfer.quant
    quantizes the merged values with that tensor's importance weights (and without an entry, without)."""
    import minfer.quant as mq
    (pa, va), (pb, vb) = models["a"], models["b"]
    qa, qb = tmp_path / "a-q4_0.gguf", tmp_path / "b-q4_0.gguf"
    minfer.quantize(pa, qa, "Q4_0", pure=True)
    minfer.quantize(pb, qb, "Q4_0", pure=True)
    rng = np.random.default_rng(9)
    name = "blk.0.ffn_up.weight"
    w = (rng.integers(1, 64, 64) / 16).astype(np.float32)
    dat = legacy_imatrix(tmp_path / "im.dat", {name: w})
    cfg = {"merge_method": "linear", "models": [{"model": str(qa), "parameters": {"weight": 0.5}},
                                                {"model": str(qb), "parameters": {"weight": 0.5}}]}
    minfer.assemble(cfg, tmp_path / "with.gguf", imatrix=dat)
    minfer.assemble(cfg, tmp_path / "without.gguf")
    ma, mb = minfer.open(qa), minfer.open(qb)
    out_with, out_without = minfer.open(tmp_path / "with.gguf"), minfer.open(tmp_path / "without.gguf")
    for n in (name, "blk.1.ffn_up.weight"):
        a = ma.tensors[n].to_numpy().astype(np.float64)
        b = mb.tensors[n].to_numpy().astype(np.float64)
        merged = ((0.5 * a + 0.5 * b) / 1.0).astype(np.float32).reshape(-1, 64)
        assert out_with.tensors[n].type == TensorType.Q4_0
        want = mq.quantize(merged, "q4_0", importance=w if n == name else None)
        assert bytes(out_with.tensors[n].data) == want.tobytes(), n
    assert bytes(out_with.tensors[name].data) != bytes(out_without.tensors[name].data)
    assert bytes(out_with.tensors["blk.1.ffn_up.weight"].data) == bytes(out_without.tensors["blk.1.ffn_up.weight"].data)


def test_sources_that_do_not_fit_and_outputs_that_are_inputs(tmp_path, models, sample_model):
    (pa, _), (pb, _) = models["a"], models["b"]
    # another architecture (the sample is qwen2)
    cfg = {"merge_method": "passthrough",
           "slices": [{"sources": [{"model": str(pa), "layer_range": [0, 1]}]},
                      {"sources": [{"model": str(sample_model), "layer_range": [0, 1]}]}]}
    with pytest.raises(RequestError) as e:
        minfer.assemble(cfg, tmp_path / "x.gguf")
    assert e.value.code == "sources_incompatible" and e.value.exit_code == 1
    # a layer range beyond the model
    cfg = {"merge_method": "passthrough", "slices": [{"sources": [{"model": str(pa), "layer_range": [0, 3]}]}]}
    with pytest.raises(RequestError) as e:
        minfer.assemble(cfg, tmp_path / "x.gguf")
    assert e.value.code == "sources_incompatible" and "beyond the 2 layers" in str(e.value)
    # the output is a source, even with overwrite
    copy = tmp_path / "a.gguf"
    copy.write_bytes(Path(pa).read_bytes())
    cfg = {"merge_method": "linear", "models": [{"model": str(copy), "parameters": {"weight": 1}},
                                                {"model": str(pb), "parameters": {"weight": 1}}]}
    with pytest.raises(GGUFError) as e:
        minfer.assemble(cfg, copy, overwrite=True)
    assert "one of the input files" in str(e.value)
    assert copy.read_bytes() == Path(pa).read_bytes()
    assert not (tmp_path / "x.gguf").exists()
