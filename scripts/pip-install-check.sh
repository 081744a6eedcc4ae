#!/usr/bin/env bash
# `pip install .` from a copy of the repository's tracked files, as on a fresh machine: Debian's
# python3 in a venv that sees Debian's numpy/pybind11/pytest (--system-site-packages), no build
# isolation (it would download setuptools), no index (nothing is downloaded). Then the Python tests
# of the core run against the installed module, from outside the source tree.
# Usage: scripts/pip-install-check.sh [pytest files...]   (default: python/tests/test_core.py)
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
python=${MINFER_PYTHON:-/usr/bin/python3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/src"
if git -C "$src" rev-parse --git-dir >/dev/null 2>&1; then
  (cd "$src" && git ls-files -z --cached --others --exclude-standard | xargs -0 cp --parents -t "$work/src")
else
  (cd "$src" && tar --exclude=./build --exclude=./.git -cf - . | tar -xf - -C "$work/src")
fi
# The copy is in a new directory each run: through ccache (scripts/ccache-env.sh), paths are made
# relative to the copy, so that the wheel's build reuses the objects of the last run.
if [ -n "${CCACHE_BASEDIR:-}" ]; then export CCACHE_BASEDIR="$work/src"; fi
"$python" -m venv --system-site-packages "$work/venv"
start=$SECONDS
"$work/venv/bin/pip" install --no-build-isolation --no-index --disable-pip-version-check -q "$work/src"
echo "pip-install-check: pip install took $((SECONDS - start)) s" >&2
cd "$work"
"$work/venv/bin/python" - "$work/venv" <<'PY'
import sys, minfer
assert minfer.__file__.startswith(sys.argv[1]), minfer.__file__
import minfer._core, minfer._toolbox, minfer.gguf_compat  # noqa: F401
print("pip-install-check: minfer", minfer.__version__, "from", minfer.__file__)
PY
tests=("$@")
[ ${#tests[@]} -eq 0 ] && tests=("$src/python/tests/test_core.py")
env -u PYTHONPATH "$work/venv/bin/python" -m pytest -q -p no:cacheprovider "${tests[@]}"
