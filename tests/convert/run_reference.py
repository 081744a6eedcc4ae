#!/usr/bin/python3
"""Convert every test model with llama.cpp's convert_hf_to_gguf.py and record or check the outputs' SHA-256.

    /usr/bin/python3 tests/convert/run_reference.py [--write] [--repeat N] [--only MODEL ...] [--outtype T ...]
                                                   [--keep] [--load-check] [--no-make]

Needs scripts/convert-ref.sh (the reference under build/convert-ref/) and tests/convert/make_models.py's models (it
runs make_models.py into --models first unless --no-make). For every model and every --outtype (f32 f16 bf16 q8_0
auto) it runs, from the repository root,

    /usr/bin/python3 build/convert-ref/run_convert.py build/convert-models/MODEL \\
        --outfile build/convert-out/MODEL-OUTTYPE.gguf --outtype OUTTYPE --model-name "minfer convert test"

and compares the output's SHA-256 and size with tests/convert/reference.tsv (exit 1 on any difference), or with
--write rewrites that file and tests/convert/models.sha256 (every input file's SHA-256). --repeat 2 converts
everything twice and fails unless both runs give the same bytes (each run is a new Python process, so string hashing
differs between runs). The TSV's input_sha256 is the SHA-256 of make_models.py's manifest lines for the model, so a
difference can be told apart: inputs or converter. --load-check also loads every output with llama.cpp and generates
a few tokens (scripts/convert-ref.sh --llama installs it). The last line is "N passed, N failed".
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TSV = ROOT / "tests" / "convert" / "reference.tsv"
MANIFEST = ROOT / "tests" / "convert" / "models.sha256"
REF = ROOT / "build" / "convert-ref"
MODEL_NAME = "minfer convert test"
OUTTYPES = ("f32", "f16", "bf16", "q8_0", "auto")
COLUMNS = ("model", "outtype", "sha256", "size", "input_sha256", "command")

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, str(Path(__file__).resolve().parent))
import make_models  # noqa: E402


def sha256_file(p: Path) -> str:
    h = hashlib.sha256()
    with open(p, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def input_lines(model_dir: Path) -> list[str]:
    """make_models.py's manifest lines for one model: sha256, size and path of each file."""
    lines = []
    for p in sorted(model_dir.rglob("*")):
        if p.is_file():
            lines.append(f"{sha256_file(p)}  {p.stat().st_size}  {p.relative_to(model_dir)}\n")
    return lines


def input_digest(lines: list[str]) -> str:
    return hashlib.sha256("".join(lines).encode()).hexdigest()


def rel(p: Path) -> str:
    try:
        return str(p.resolve().relative_to(ROOT))
    except ValueError:
        return str(p.resolve())


def llama_cpp_commit() -> tuple[str, str]:
    f = REF / "llama.cpp" / "COMMIT"
    if not f.is_file():
        sys.exit("run_reference: build/convert-ref is not prepared (run scripts/convert-ref.sh)")
    lines = f.read_text(encoding="utf-8").splitlines()
    return lines[0], lines[1] if len(lines) > 1 else ""


def read_tsv(path: Path) -> tuple[dict[str, str], dict[tuple[str, str], dict[str, str]]]:
    meta: dict[str, str] = {}
    rows: dict[tuple[str, str], dict[str, str]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("#"):
            k, _, v = line[1:].strip().partition(" ")
            meta[k] = v
            continue
        fields = line.split("\t")
        if fields[0] == "model":
            continue
        row = dict(zip(COLUMNS, fields))
        rows[(row["model"], row["outtype"])] = row
    return meta, rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", type=Path, default=ROOT / "build" / "convert-models")
    ap.add_argument("--out", type=Path, default=ROOT / "build" / "convert-out")
    ap.add_argument("--tsv", type=Path, default=TSV)
    ap.add_argument("--write", action="store_true", help="rewrite the TSV instead of comparing with it")
    ap.add_argument("--repeat", type=int, default=1, help="convert everything N times; all runs must agree")
    ap.add_argument("--no-make", action="store_true", help="use the models already in --models")
    ap.add_argument("--keep", action="store_true", help="keep every output (default: delete each after hashing)")
    ap.add_argument("--only", nargs="+", choices=sorted(make_models.MODELS))
    ap.add_argument("--outtype", nargs="+", choices=OUTTYPES, default=list(OUTTYPES))
    ap.add_argument("--load-check", action="store_true",
                    help="load and run every output with llama.cpp (needs scripts/convert-ref.sh --llama; implies "
                         "--keep)")
    ap.add_argument("--python", default=os.environ.get("PYTHON", "/usr/bin/python3"))
    args = ap.parse_args()
    if args.write and (args.only or set(args.outtype) != set(OUTTYPES)):
        sys.exit("run_reference: --write records every model and outtype (no --only, no --outtype)")
    if args.load_check:
        args.keep = True
        if not (REF / "llama" / "llama_load_check.mjs").is_file():
            sys.exit("run_reference: --load-check needs scripts/convert-ref.sh --llama")

    commit, commit_desc = llama_cpp_commit()
    models = args.only or list(make_models.MODELS)
    if not args.no_make:
        cmd = [args.python, str(ROOT / "tests" / "convert" / "make_models.py"), "--out", str(args.models),
               "--only", *models]
        subprocess.run(cmd, check=True, cwd=ROOT)
    args.out.mkdir(parents=True, exist_ok=True)

    results: dict[tuple[str, str], dict[str, str]] = {}
    failures: list[str] = []
    inputs: dict[str, list[str]] = {}
    t_all = time.monotonic()
    for model in models:
        mdir = args.models / model
        if not mdir.is_dir():
            sys.exit(f"run_reference: {mdir} missing (run tests/convert/make_models.py)")
        inputs[model] = input_lines(mdir)
        digest = input_digest(inputs[model])
        for outtype in args.outtype:
            out = args.out / f"{model}-{outtype}.gguf"
            cmd = [args.python, rel(REF / "run_convert.py"), rel(mdir), "--outfile", rel(out),
                   "--outtype", outtype, "--model-name", MODEL_NAME]
            seen: set[tuple[str, int]] = set()
            for run in range(args.repeat):
                if out.exists():
                    out.unlink()
                t0 = time.monotonic()
                p = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
                dt = time.monotonic() - t0
                if p.returncode != 0 or not out.is_file():
                    log = args.out / f"{model}-{outtype}.log"
                    log.write_text(p.stdout, encoding="utf-8")
                    failures.append(f"{model} {outtype}: the converter failed (exit {p.returncode}), see {rel(log)}")
                    break
                h, size = sha256_file(out), out.stat().st_size
                seen.add((h, size))
                print(f"run_reference: {model} {outtype} run {run + 1}: {h} {size} ({dt:.1f} s)", file=sys.stderr)
                if not args.keep:
                    out.unlink()
            if len(seen) > 1:
                failures.append(f"{model} {outtype}: runs differ: {sorted(seen)}")
            if len(seen) == 1:
                h, size = next(iter(seen))
                results[(model, outtype)] = {"model": model, "outtype": outtype, "sha256": h, "size": str(size),
                                             "input_sha256": digest, "command": shlex.join(cmd)}
    elapsed = time.monotonic() - t_all

    if args.load_check and results:
        outs = [str(args.out / f"{m}-{t}.gguf") for m, t in sorted(results)]
        p = subprocess.run([os.environ.get("NODE", "node"), str(REF / "llama" / "llama_load_check.mjs"), *outs],
                           cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        print(p.stdout, end="", file=sys.stderr)
        if p.returncode != 0:
            failures.append(f"llama.cpp could not load or run some outputs (exit {p.returncode})")

    if args.write:
        if failures:
            print("\n".join(failures), file=sys.stderr)
            return 1
        with open(args.tsv, "w", encoding="utf-8", newline="\n") as f:
            f.write(f"# llama.cpp {commit} {commit_desc}\n")
            f.write("# convert_hf_to_gguf.py outputs for tests/convert/make_models.py's models (docs/CONVERT_REFERENCE.md);"
                    " written by tests/convert/run_reference.py --write, commands run from the repository root\n")
            f.write("\t".join(COLUMNS) + "\n")
            order = {m: i for i, m in enumerate(make_models.MODELS)}
            for key in sorted(results, key=lambda k: (order[k[0]], OUTTYPES.index(k[1]))):
                f.write("\t".join(results[key][c] for c in COLUMNS) + "\n")
        with open(MANIFEST, "w", encoding="utf-8", newline="\n") as f:
            for model in make_models.MODELS:
                for l in inputs[model]:
                    sha, size, path = l.rstrip("\n").split("  ", 2)
                    f.write(f"{sha}  {size}  {model}/{path}\n")
        print(f"run_reference: wrote {rel(args.tsv)} and {rel(MANIFEST)}: {len(results)} outputs, "
              f"{args.repeat} run(s) each agreeing ({elapsed:.0f} s)", file=sys.stderr)
        return 0

    meta, expected = read_tsv(args.tsv)
    if meta.get("llama.cpp", "").split(" ")[0] != commit:
        failures.append(f"{rel(args.tsv)} was made with llama.cpp {meta.get('llama.cpp')}, build/convert-ref has {commit}")
    passed = 0
    for key, got in sorted(results.items()):
        want = expected.get(key)
        if want is None:
            failures.append(f"{key[0]} {key[1]}: not in {rel(args.tsv)}")
        elif (want["sha256"], want["size"]) != (got["sha256"], got["size"]):
            why = "" if want["input_sha256"] == got["input_sha256"] else " (its inputs differ from the recorded ones)"
            failures.append(f"{key[0]} {key[1]}: {got['sha256']} {got['size']}, recorded {want['sha256']} "
                            f"{want['size']}{why}")
        else:
            passed += 1
    if any("inputs differ" in f for f in failures) and MANIFEST.is_file():
        recorded = set(MANIFEST.read_text(encoding="utf-8").splitlines())
        for model, lines in inputs.items():
            for l in lines:
                sha, size, path = l.rstrip("\n").split("  ", 2)
                if f"{sha}  {size}  {model}/{path}" not in recorded:
                    print(f"run_reference: input {model}/{path} differs from {rel(MANIFEST)}", file=sys.stderr)
    print(f"run_reference: {len(results)} outputs checked in {elapsed:.0f} s", file=sys.stderr)
    if failures:
        print("\n".join(failures), file=sys.stderr)
    print(f"{passed} passed, {len(failures)} failed")
    return 1 if failures else 0

if __name__ == "__main__":
    sys.exit(main())
