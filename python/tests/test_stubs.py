"""The type stubs (.pyi) say what the extension modules really have: mypy's stubtest compares
every name, signature and property of the built module with its stub."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from conftest import python_env  # noqa: E402

HERE = Path(__file__).parent


def stubtest(module: str, cwd: Path) -> subprocess.CompletedProcess:
    pytest.importorskip("mypy", reason="mypy (Debian's package mypy) is not installed: stubs unchecked")
    return subprocess.run([sys.executable, "-m", "mypy.stubtest", module, "--allowlist",
                           str(HERE / "stubtest-allowlist.txt"), "--ignore-unused-allowlist"],
                          capture_output=True, text=True, env=python_env(MYPYPATH=""), cwd=str(cwd))  # not python/: its sources would shadow the built module


def test_core_stub_matches_the_module(tmp_path):
    r = stubtest("minfer._core", tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr


def test_toolbox_stub_matches_the_module(tmp_path):
    r = stubtest("minfer._toolbox", tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
