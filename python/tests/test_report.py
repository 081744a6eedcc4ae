"""minfer.report and `minfer report` from the user's side: the document's sections against the model
read by minfer.open, every statistic and comparison figure against numpy's own computation over the
dequantized values (the figures are the report's accumulation, numpy is the reference), the page
holding the document inertly (hostile strings), and the refusals with their exit codes. The page in
a real browser: tests/browser."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))
import gguf_bytes as gb  # noqa: E402

import minfer  # noqa: E402

F32, F16, Q8_0 = 0, 1, 8


def values(path: Path, name: str) -> np.ndarray:
    with minfer.open(path) as m:
        return np.asarray(m.tensors[name].to_numpy(), dtype=np.float32).reshape(-1)


def llama_model(path: Path, seed: int, hostile: str = "") -> Path:
    """A 3-layer llama-shaped model of f32 weights with a small vocabulary (and hostile strings)."""
    rng = np.random.default_rng(seed)
    tokens = [f"tok{i}" for i in range(300)] + ["</script><script>window.__pwned=1</script>", "<!--", "\u2028x"]
    kvs = [("general.architecture", gb.STRING, "llama"), ("general.name", gb.STRING, "report-test" + hostile),
           ("llama.block_count", gb.U32, 3), ("llama.embedding_length", gb.U32, 64), ("llama.context_length", gb.U32, 256),
           ("tokenizer.ggml.model", gb.STRING, "llama"),
           ("tokenizer.ggml.tokens", gb.ARRAY, (gb.STRING, tokens)),
           ("tokenizer.ggml.scores", gb.ARRAY, (gb.F32, [float(-i) for i in range(len(tokens))])),
           ("tokenizer.ggml.token_type", gb.ARRAY, (gb.I32, [1] * len(tokens))),
           ("tokenizer.ggml.bos_token_id", gb.U32, 1),
           ("tokenizer.chat_template", gb.STRING, "{{ messages }}" + hostile)]
    if hostile:
        kvs.append((hostile, gb.STRING, hostile))
    tensors = [("token_embd.weight", [64, len(tokens)], F32, rng.standard_normal(64 * len(tokens), dtype=np.float32).tobytes())]
    for b in range(3):
        for role, shape in (("attn_q", [64, 64]), ("ffn_up", [64, 128]), ("attn_norm", [64])):
            data = rng.standard_normal(int(np.prod(shape)), dtype=np.float32) * (b + 1)
            tensors.append((f"blk.{b}.{role}.weight", shape, F32, data.tobytes()))
    tensors.append(("output_norm.weight", [64], F32, np.ones(64, dtype=np.float32).tobytes()))
    path.write_bytes(gb.gguf(kvs, tensors))
    return path


@pytest.fixture(scope="module")
def pair(tmp_path_factory, minfer_cli):
    d = tmp_path_factory.mktemp("report")
    ref = llama_model(d / "ref.gguf", 1)
    q8 = d / "q8.gguf"
    subprocess.run([str(minfer_cli), "quantize", str(ref), str(q8), "Q8_0", "--quiet"], check=True)
    return ref, q8


def test_sections_match_the_model(pair):
    ref, _ = pair
    doc = minfer.report(ref)
    with minfer.open(ref) as m:
        assert doc["minfer_report"] == 1 and doc["mode"] == "model" and doc["values"] is False
        assert [t["name"] for t in doc["tensors"]] == list(m.tensors)
        assert [k["key"] for k in doc["metadata"]] == list(m.metadata)
        for t in doc["tensors"]:
            mt = m.tensors[t["name"]]
            assert (t["bytes"], t["elements"], tuple(t["shape"])) == (mt.n_bytes, int(np.prod(mt.shape)), tuple(mt.shape))
            assert t["stats"] is None
        s = doc["models"][0]
        assert s["parameters"] == sum(int(np.prod(t.shape)) for t in m.tensors.values())
        assert s["architecture"] == "llama" and s["block_count"] == 3 and s["vocab_size"] == 303
    assert doc["layers"]["count"] == 3
    assert len(doc["layers"]["cells"]) == 9 and doc["layers"]["roles"] == ["attn_q", "ffn_up", "attn_norm"]
    assert sum(c["bytes"] for c in doc["layers"]["cells"]) == sum(t["bytes"] for t in doc["tensors"] if t["layer"] is not None)
    assert sum(t["bytes"] for t in doc["by_type"]) == sum(t["bytes"] for t in doc["tensors"])
    tok = doc["tokens"]
    assert tok["count"] == 303 and tok["texts"][300] == "</script><script>window.__pwned=1</script>"
    assert tok["scores"][5] == -5.0 and tok["types"][0] == 1 and tok["special"] == {"bos": 1}
    assert doc["chat_template"] == "{{ messages }}"
    arr = next(k for k in doc["metadata"] if k["key"] == "tokenizer.ggml.tokens")
    assert arr["count"] == 303 and len(arr["items"]) == 303 and arr["truncated"] is False


def test_values_are_numpys(pair):
    ref, _ = pair
    doc = minfer.report(ref, values=True)
    for t in doc["tensors"]:
        v = values(ref, t["name"]).astype(np.float64)
        s = t["stats"]
        assert s["count"] == v.size and s["nan"] == 0 and s["inf"] == 0
        assert np.float32(s["min"]) == np.float32(v.min()) and np.float32(s["max"]) == np.float32(v.max())
        assert s["mean"] == pytest.approx(v.mean(), rel=1e-6, abs=1e-7)
        assert s["std"] == pytest.approx(v.std(), rel=1e-5)
        h = s["histogram"]
        counts, _ = np.histogram(v, bins=len(h["counts"]), range=(h["lo"], h["lo"] + h["width"] * len(h["counts"])))
        assert h["counts"] == counts.tolist(), t["name"]
        assert h["lo"] <= v.min() and v.max() < h["lo"] + h["width"] * len(h["counts"])


def test_comparison_figures_are_numpys(pair, tmp_path):
    ref, q8 = pair
    # importance weights for one tensor (one per column), as llama-imatrix's legacy file holds them
    name = "blk.1.ffn_up.weight"
    w = np.linspace(0.5, 2.0, 64, dtype=np.float32)
    out = [np.int32(1).tobytes(), np.int32(len(name)).tobytes(), name.encode(), np.int32(1).tobytes(),
           np.int32(w.size).tobytes(), w.tobytes(), np.int32(1).tobytes(), np.int32(4).tobytes(), b"test"]
    dat = tmp_path / "im.dat"
    dat.write_bytes(b"".join(out))
    doc = minfer.report([ref, q8], imatrix=dat)
    assert doc["mode"] == "compare" and [m["location"] for m in doc["models"]] == [str(ref), str(q8)]
    c = doc["compare"]
    assert c["only_in_reference"] == [] and c["only_in_compared"] == [] and c["shape_mismatch"] == []
    assert len(c["errors"]) == len(doc["tensors"])
    for e in c["errors"]:
        a = values(ref, e["name"]).astype(np.float64)
        b = values(q8, e["name"]).astype(np.float64)
        d = b - a
        assert e["rmse"] == pytest.approx(np.sqrt(np.mean(d * d)), rel=1e-9, abs=1e-12)
        assert e["nmse"] == pytest.approx(np.sum(d * d) / np.sum(a * a), rel=1e-9, abs=1e-15)
        assert e["cosine"] == pytest.approx(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)), rel=1e-12)
        assert e["max_abs"] == np.abs(d).max() and e["max_abs_index"] == int(np.argmax(np.abs(d)))
        assert e["relative_error"] == pytest.approx(np.linalg.norm(d) / np.linalg.norm(a), rel=1e-9, abs=1e-15)
        if e["name"] == name:
            ww = np.tile(w.astype(np.float64), a.size // 64)
            assert e["weighted_rmse"] == pytest.approx(np.sqrt(np.sum(ww * d * d) / np.sum(ww)), rel=1e-9)
        else:
            assert e["weighted_rmse"] is None
        assert e["reference_type"] == "f32"


def test_tensors_that_do_not_fit_are_listed_not_compared(tmp_path):
    a = tmp_path / "a.gguf"
    b = tmp_path / "b.gguf"
    one = np.ones(8, dtype=np.float32).tobytes()
    kv = [("general.architecture", gb.STRING, "llama")]
    a.write_bytes(gb.gguf(kv, [("x", [8], F32, one), ("only_a", [8], F32, one), ("s", [8], F32, one)]))
    b.write_bytes(gb.gguf(kv, [("x", [8], F32, one), ("only_b", [8], F32, one), ("s", [4, 2], F32, one)]))
    c = minfer.report([a, b])["compare"]
    assert [e["name"] for e in c["errors"]] == ["x"] and c["errors"][0]["rmse"] == 0.0
    assert c["only_in_reference"] == ["only_a"] and c["only_in_compared"] == ["only_b"]
    assert c["shape_mismatch"] == [{"name": "s", "reference_shape": [8], "compared_shape": [4, 2]}]


def test_outliers_are_marked_by_role(tmp_path):
    """Five f32 copies of a tensor role, one quantized much worse than the others: only it is marked."""
    rng = np.random.default_rng(3)
    kv = [("general.architecture", gb.STRING, "llama"), ("llama.block_count", gb.U32, 5)]
    ref, cmp_ = [], []
    for b in range(5):
        v = rng.standard_normal(256).astype(np.float32)
        noise = rng.standard_normal(256).astype(np.float32) * (0.5 if b == 3 else 0.001)
        ref.append((f"blk.{b}.ffn_up.weight", [256], F32, v.tobytes()))
        cmp_.append((f"blk.{b}.ffn_up.weight", [256], F32, (v + noise).tobytes()))
    (tmp_path / "a.gguf").write_bytes(gb.gguf(kv, ref))
    (tmp_path / "b.gguf").write_bytes(gb.gguf(kv, cmp_))
    errs = minfer.report([tmp_path / "a.gguf", tmp_path / "b.gguf"])["compare"]["errors"]
    assert [e["name"] for e in errs if e["outlier"]] == ["blk.3.ffn_up.weight"]


def test_the_page_holds_the_document_inertly(tmp_path, minfer_cli):
    hostile = "</script><script>window.__pwned=1</script><img src=x onerror=alert(1)>"
    model = llama_model(tmp_path / "h.gguf", 7, hostile)
    page = tmp_path / "h.html"
    r = subprocess.run([str(minfer_cli), "report", str(model), "-o", str(page)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    html = page.read_text(encoding="utf-8")
    # the page's own two script elements (the document, the code) and no other; the strings are
    # there only as JSON escapes (\u003c) or HTML entities (&lt; in the title), never as markup
    assert re.findall(r"<script[^>]*>", html) == ['<script type="application/json" id="report-data">', "<script>"]
    assert "<img src=x" not in html and "</script><script>" not in html
    assert "&lt;/script&gt;&lt;script&gt;window.__pwned" in html  # the title, escaped
    m = re.search(r'<script type="application/json" id="report-data">(.*?)</script>', html, re.S)
    assert m is not None
    embedded = json.loads(m.group(1))
    doc = json.loads(subprocess.run([str(minfer_cli), "report", str(model), "--json"], capture_output=True, check=True).stdout)
    assert embedded == doc
    assert any(k["key"] == hostile for k in embedded["metadata"])
    assert "http://" not in html.replace("http://www.w3.org/2000/svg", "") and "https://" not in html


def test_cli_json_equals_python_and_refusals(pair, tmp_path, minfer_cli):
    ref, q8 = pair
    doc = json.loads(subprocess.run([str(minfer_cli), "report", str(ref), str(q8), "--json"], capture_output=True,
                                    check=True).stdout)
    py = minfer.report([ref, q8])
    py.pop("fetched")
    assert doc == py

    def run(*args):
        return subprocess.run([str(minfer_cli), "report", *map(str, args)], capture_output=True, text=True)

    page = tmp_path / "p.html"
    assert run(ref, "-o", page).returncode == 0 and page.stat().st_size > 0
    r = run(ref, "-o", page)
    assert r.returncode == 2 and "already exists" in r.stderr
    assert run(ref, "-o", page, "--force").returncode == 0
    r = run(ref, "-o", ref)
    assert r.returncode == 2 and "one of the models" in r.stderr
    assert run(ref).returncode == 2                                    # no -o, no --json
    assert run(ref, q8, ref, "--json").returncode == 2                 # three models
    assert run(ref, "--json", "--imatrix", ref).returncode == 2         # imatrix without a comparison
    r = run(tmp_path / "missing.gguf", "--json")
    assert r.returncode == 3
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"GGUF\x03\x00\x00\x00" + b"\xff" * 16)
    assert run(bad, "--json").returncode == 1
    r = run("http://127.0.0.1:9/m.gguf", "--values", "--json")
    assert r.returncode == 2 and "--max-fetch" in r.stderr
    with pytest.raises(minfer.RequestError) as info:
        minfer.report("http://127.0.0.1:9/m.gguf", values=True)
    assert info.value.exit_code == 2
    with pytest.raises(minfer.RequestError):
        minfer.report([ref, q8, ref])
    with pytest.raises(minfer.RequestError):
        minfer.report(ref, page)                                      # exists, no overwrite


def test_huge_arrays_are_summarized_within_the_cap(tmp_path):
    """An array of 200,000 items is summarized: its first 1,024 items in the document, never all."""
    p = tmp_path / "big-array.gguf"
    p.write_bytes(gb.gguf([("general.architecture", gb.STRING, "llama"),
                           ("llama.rope.big", gb.ARRAY, (gb.U32, list(range(200_000)))),
                           ("llama.names", gb.ARRAY, (gb.STRING, ["n%d" % i for i in range(5000)]))]))
    doc = minfer.report(p)
    big = next(k for k in doc["metadata"] if k["key"] == "llama.rope.big")
    assert big["count"] == 200_000 and big["truncated"] is True and big["items"] == [str(i) for i in range(1024)]
    assert big["value"] == "[0, 1, 2, 3, 4, 5, 6, 7, …]" and big["type"] == "array[u32]"
    names = next(k for k in doc["metadata"] if k["key"] == "llama.names")
    assert len(names["items"]) == 1024 and names["items"][-1] == "n1023" and names["truncated"] is True
    assert doc["tokens"] is None and doc["tensors"] == [] and doc["layers"]["cells"] == []


def test_a_split_set_is_reported_from_its_first_part(pair, tmp_path, minfer_cli):
    ref, _ = pair
    subprocess.run([str(minfer_cli), "split", str(ref), str(tmp_path / "s"), "--split-max-tensors", "4", "--quiet"], check=True)
    parts = sorted(tmp_path.glob("s-0000*-of-*.gguf"))
    assert len(parts) == 3
    whole, split = minfer.report(ref, values=True), minfer.report(parts[0], values=True)
    assert split["models"][0]["parts"] == 3
    assert [t["name"] for t in split["tensors"]] == [t["name"] for t in whole["tensors"]]
    assert [t["stats"] for t in split["tensors"]] == [t["stats"] for t in whole["tensors"]]
    assert [t["part"] for t in split["tensors"]] == [1 + i // 4 for i in range(len(split["tensors"]))]


def test_no_part_of_a_split_set_is_written_over(pair, tmp_path, minfer_cli):
    # The output is checked against every file of each model: a later part of a set, or a link to
    # one, is the model's too (before: only part 1's path was compared).
    ref, _ = pair
    subprocess.run([str(minfer_cli), "split", str(ref), str(tmp_path / "s"), "--split-max-tensors", "4", "--quiet"], check=True)
    parts = sorted(tmp_path.glob("s-0000*-of-*.gguf"))
    link = tmp_path / "link.html"
    link.symlink_to(parts[2])
    before = [p.read_bytes() for p in parts]
    for target in (parts[1], link):
        r = subprocess.run([str(minfer_cli), "report", str(parts[0]), "-o", str(target), "--force"], capture_output=True,
                           text=True)
        assert r.returncode == 2 and "one of the models" in r.stderr, r.stderr
        with pytest.raises(minfer.RequestError):
            minfer.report(parts[0], output=target, overwrite=True)
    assert [p.read_bytes() for p in parts] == before
