"""Shared fixtures of the Python tests: where the tools and files are, and a few small models.

ctest sets MINFER_CLI (the minfer tool: the C++ reference for values), MINFER_SAMPLE (the
sample-model writer), MINFER_SHARED (../shared: the real files) and PYTHONPATH (the built module).
Run by hand: PYTHONPATH=build/quick/python MINFER_CLI=build/quick/cli/minfer \
MINFER_SAMPLE=build/quick/tools/sample/minfer-sample python3 -m pytest python/tests
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# Under the asan preset, ctest preloads the sanitizer runtime into this (uninstrumented) interpreter.
# The tools the tests run are instrumented themselves and refuse a second runtime, so the preload
# is taken out of the environment children inherit; python_env() puts it back for a child Python
# that imports the module.
_PRELOAD = os.environ.pop("LD_PRELOAD", None)


def python_env(**extra: str) -> dict:
    """The environment for a child Python process that imports minfer."""
    env = dict(os.environ, **extra)
    if _PRELOAD:
        env["LD_PRELOAD"] = _PRELOAD
    return env


def _tool(var: str, rel: str) -> Path:
    if os.environ.get(var):
        return Path(os.environ[var])
    for preset in ("quick", "dev", "release"):
        p = ROOT / "build" / preset / rel
        if p.exists():
            return p
    pytest.skip(f"{var} is not set and {rel} is not built", allow_module_level=False)
    raise AssertionError  # unreachable


@pytest.fixture(scope="session")
def minfer_cli() -> Path:
    """The minfer command-line tool (the C++ library's reading of a file, as JSON or raw f32)."""
    return _tool("MINFER_CLI", "cli/minfer")


@pytest.fixture(scope="session")
def sample_model(tmp_path_factory) -> Path:
    """The README's Qwen2-shaped sample model (F32, F16, Q4_0, Q8_0 tensors, vocabulary, merges,
    chat template), written by the project's C++ writer."""
    tool = _tool("MINFER_SAMPLE", "tools/sample/minfer-sample")
    path = tmp_path_factory.mktemp("sample") / "qwen2-sample.gguf"
    subprocess.run([str(tool), str(path)], check=True, stdout=subprocess.DEVNULL)
    return path


def shared_dir() -> Path:
    return Path(os.environ.get("MINFER_SHARED", str(ROOT.parent / "shared")))


def real_files() -> list:
    """The real files of ../shared/fixtures/real (empty when ../shared is absent)."""
    d = shared_dir() / "fixtures" / "real"
    return sorted(d.glob("*.gguf")) if d.is_dir() else []


def reference_rows() -> dict:
    """REFERENCE.txt: file name -> (verdict, {field: value}) as llama.cpp reported it."""
    p = shared_dir() / "fixtures" / "real" / "REFERENCE.txt"
    rows = {}
    if not p.exists():
        return rows
    for line in p.read_text().splitlines():
        if not line or line.startswith("#") or line.startswith(" "):
            continue
        cols = line.split("\t")
        fields = dict(c.split("=", 1) for c in cols[2:] if "=" in c)
        rows[cols[0]] = (cols[1], fields)
    return rows
