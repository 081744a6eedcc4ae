"""minfer.open(URL) against a loopback HTTP server written here (range requests, counted bytes):
the same metadata and tensor table as the local file, only the head fetched, errors as exceptions."""

from __future__ import annotations

import http.server
import re
import subprocess
import threading
from pathlib import Path

import sys

import pytest

sys.path.insert(0, str(Path(__file__).parent))
import gguf_bytes as G  # noqa: E402

import minfer  # noqa: E402


class RangeHandler(http.server.BaseHTTPRequestHandler):
    root: Path
    sent = 0
    ignore_ranges = False

    def log_message(self, *args):  # quiet
        pass

    def do_GET(self):
        path = self.root / self.path.lstrip("/")
        if not path.is_file():
            self.send_error(404)
            return
        data = path.read_bytes()
        m = re.fullmatch(r"bytes=(\d+)-(\d*)", self.headers.get("Range", ""))
        if m and not self.ignore_ranges:
            start = int(m.group(1))
            end = min(int(m.group(2)) if m.group(2) else len(data) - 1, len(data) - 1)
            if start >= len(data):
                self.send_response(416)
                self.send_header("Content-Range", f"bytes */{len(data)}")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            body = data[start:end + 1]
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{end}/{len(data)}")
        else:
            body = data
            self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        type(self).sent += len(body)  # counted before the client can see the body end
        try:
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass


@pytest.fixture()
def server(tmp_path):
    handler = type("H", (RangeHandler,), {"root": tmp_path, "sent": 0, "ignore_ranges": False})
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", handler, tmp_path
    httpd.shutdown()
    httpd.server_close()


def same_head(remote: minfer.Model, local: minfer.Model) -> None:
    assert remote.metadata.keys() == local.metadata.keys()
    for k in local.metadata:
        a, b = remote.metadata[k], local.metadata[k]
        if isinstance(b, minfer.StringArray):
            assert a.to_list() == b.to_list()
        elif hasattr(b, "tolist"):
            assert a.tolist() == b.tolist()
        else:
            assert a == b, k
    assert list(remote.tensors) == list(local.tensors)
    for name, t in local.tensors.items():
        r = remote.tensors[name]
        assert (r.type, r.shape, r.offset, r.n_bytes, r.part) == (t.type, t.shape, t.offset, t.n_bytes, t.part)


def test_a_remote_model_reads_as_its_local_copy(server, sample_model):
    url, handler, root = server
    (root / "m.gguf").write_bytes(sample_model.read_bytes())
    with minfer.open(f"{url}/m.gguf", max_fetch=1 << 20) as remote, minfer.open(sample_model) as local:
        assert remote.is_remote and not local.is_remote
        same_head(remote, local)
        assert remote.fetched_bytes == handler.sent > 0 and remote.requests >= 1
        assert remote.file_bytes == sample_model.stat().st_size
        # the file is smaller than the first range asked: it came whole, tensor data included
        assert remote.parts[0].complete and remote.fetched_bytes == remote.file_bytes
        assert remote.tensors["output.weight"].data.tobytes() == local.tensors["output.weight"].data.tobytes()


def test_only_the_head_of_a_large_remote_file_is_fetched(server):
    url, handler, root = server
    big = G.gguf([("general.architecture", G.STRING, "llama")], [("w", [1 << 20], 0, bytes(4 << 20))])
    (root / "big.gguf").write_bytes(big)
    with minfer.open(f"{url}/big.gguf") as remote:
        assert not remote.parts[0].complete and remote.file_bytes == len(big)
        assert remote.fetched_bytes == handler.sent < len(big) // 4
        assert remote.tensors["w"].shape == (1 << 20,) and remote.metadata["general.architecture"] == "llama"
        with pytest.raises(ValueError, match="not fetched"):
            remote.tensors["w"].data
        with pytest.raises(ValueError, match="not fetched"):
            remote.tensors["w"].to_numpy()


def test_a_remote_split_set_finds_its_parts(server, sample_model, minfer_cli):
    url, handler, root = server
    subprocess.run([str(minfer_cli), "split", str(sample_model), str(root / "s"), "--split-max-tensors", "14"],
                   check=True, stdout=subprocess.DEVNULL)
    with minfer.open(f"{url}/s-00001-of-00002.gguf") as remote, minfer.open(root / "s-00001-of-00002.gguf") as local:
        assert len(remote.parts) == 2
        same_head(remote, local)


def test_http_errors_are_io_errors(server, sample_model):
    url, handler, root = server
    with pytest.raises(minfer.GGUFIOError) as info:
        minfer.open(f"{url}/missing.gguf")
    assert info.value.code == "http_status" and info.value.found == 404 and info.value.exit_code == 3
    (root / "m.gguf").write_bytes(sample_model.read_bytes())
    with pytest.raises(minfer.GGUFIOError) as info:
        minfer.open(f"{url}/m.gguf", max_fetch=4096)
    assert info.value.code == "fetch_budget_exceeded" and info.value.expected == 4096
    handler.ignore_ranges = True
    with pytest.raises(minfer.GGUFIOError) as info:
        minfer.open(f"{url}/m.gguf", max_fetch=1 << 20)
    assert info.value.code == "range_ignored"


def test_an_invalid_remote_file_gets_the_local_verdict(server, tmp_path):
    url, handler, root = server
    bad = b"GGUF" + (3).to_bytes(4, "little") + (0).to_bytes(8, "little") + (1).to_bytes(8, "little") + b"\x00" * 8
    (root / "bad.gguf").write_bytes(bad)
    with pytest.raises(minfer.InvalidFileError) as remote_err:
        minfer.open(f"{url}/bad.gguf")
    with pytest.raises(minfer.InvalidFileError) as local_err:
        minfer.open(root / "bad.gguf")
    assert remote_err.value.code == local_err.value.code
    assert remote_err.value.offset == local_err.value.offset


def test_bad_urls_and_options(server):
    url, _, _ = server
    with pytest.raises(minfer.GGUFError):
        minfer.open("ftp://example.invalid/x.gguf")  # not a URL we read: a file of that name, absent
    with pytest.raises(ValueError):
        minfer.open(f"{url}/m.gguf", timeout=0)
    with pytest.raises(TypeError):
        minfer.open(f"{url}/m.gguf", max_fetch="lots")


def _llama_model(path: Path, seed: int) -> None:
    """A 3-block llama-shaped model of f32 weights (1 MiB per block)."""
    import numpy as np
    rng = np.random.default_rng(seed)
    tensors = [("token_embd.weight", [64, 256], 0, rng.standard_normal(64 * 256, dtype=np.float32).tobytes())]
    for b in range(3):
        tensors.append((f"blk.{b}.ffn_up.weight", [256, 1024], 0, rng.standard_normal(256 * 1024, dtype=np.float32).tobytes()))
    path.write_bytes(G.gguf([("general.architecture", G.STRING, "llama"), ("llama.block_count", G.U32, 3),
                             ("llama.embedding_length", G.U32, 64)], tensors))


def test_assemble_takes_only_the_tensors_it_needs_from_a_url(server, tmp_path):
    url, handler, root = server
    _llama_model(root / "a.gguf", 1)
    _llama_model(root / "b.gguf", 2)
    cfg = {"merge_method": "passthrough",
           "slices": [{"sources": [{"model": f"{url}/a.gguf", "layer_range": [0, 1]}]},
                      {"sources": [{"model": f"{url}/b.gguf", "layer_range": [2, 3]}]}]}
    local = {"merge_method": "passthrough",
             "slices": [{"sources": [{"model": str(root / "a.gguf"), "layer_range": [0, 1]}]},
                        {"sources": [{"model": str(root / "b.gguf"), "layer_range": [2, 3]}]}]}
    r = minfer.assemble(cfg, tmp_path / "remote.gguf", provenance=False)
    minfer.assemble(local, tmp_path / "local.gguf", provenance=False)
    assert (tmp_path / "remote.gguf").read_bytes() == (tmp_path / "local.gguf").read_bytes()
    taken = 64 * 256 * 4 + 2 * 256 * 1024 * 4  # the embedding and one block of each model
    # the heads' first ranges reach into the data (token_embd.weight): those bytes are not asked again
    assert taken - 2 * (256 << 10) <= r.fetched["tensor_bytes_planned"] <= taken
    assert r.fetched["bytes"] == r.fetched["head_bytes"] + r.fetched["tensor_bytes_planned"] == handler.sent
    assert handler.sent <= r.fetched["head_bytes"] + taken + (1 << 20) < (root / "a.gguf").stat().st_size * 2 - (1 << 20)
    # a budget below the plan: refused before any tensor is fetched, nothing written
    handler.sent = 0
    with pytest.raises(minfer.GGUFIOError) as info:
        minfer.assemble(cfg, tmp_path / "never.gguf", max_fetch="1MiB")
    assert info.value.code == "fetch_budget_exceeded" and info.value.exit_code == 3
    assert not (tmp_path / "never.gguf").exists()
    assert handler.sent <= 2 * 256 * 1024  # the heads' first ranges only
    with pytest.raises(minfer.RequestError) as info:
        minfer.assemble(cfg, tmp_path / "never.gguf", timeout=0)
    assert info.value.exit_code == 2


def test_report_of_a_url_reads_its_head_or_its_values_within_the_budget(server, tmp_path):
    url, handler, root = server
    _llama_model(root / "a.gguf", 3)
    size = (root / "a.gguf").stat().st_size
    doc = minfer.report(f"{url}/a.gguf")
    local = minfer.report(root / "a.gguf")
    for d in (doc, local):
        d.pop("fetched")
        d["models"][0].pop("location")
    assert doc == local
    assert handler.sent < size // 4  # the head only
    # values: every tensor, which needs a budget given and within it
    with pytest.raises(minfer.RequestError):
        minfer.report(f"{url}/a.gguf", values=True)
    handler.sent = 0
    with pytest.raises(minfer.GGUFIOError) as info:
        minfer.report(f"{url}/a.gguf", values=True, max_fetch="1MiB")
    assert info.value.code == "fetch_budget_exceeded"
    assert handler.sent <= 256 << 10  # refused before any tensor was fetched
    handler.sent = 0
    doc = minfer.report(f"{url}/a.gguf", values=True, max_fetch=size + (1 << 20))
    local = minfer.report(root / "a.gguf", values=True)
    assert doc["fetched"]["bytes"] == handler.sent <= size
    for d in (doc, local):
        d.pop("fetched")
        d["models"][0].pop("location")
    assert doc == local
