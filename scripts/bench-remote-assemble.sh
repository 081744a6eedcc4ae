#!/usr/bin/env bash
# `minfer assemble` with its models given as URLs (issue 30: bytes fetched <= the heads plus the taken
# tensors plus 1 MiB), against nginx (Debian's nginx-light) serving the bench models on 127.0.0.1.
# The bytes are counted by nginx ($body_bytes_sent in its access log), not by minfer; the time is put
# beside `curl` downloading the whole files (what a user does without ranged reads) in the same run.
#   passthrough  layers [0, 2) of the 4-layer f16 model and [2, 4) of the same model served under a
#                second name (two remote files, half of each taken)
#   recipe       the local 4-layer model with every ffn_up tensor taken from the remote file
#   linear       a linear merge of the remote model with the local one (each remote tensor fetched once)
#
#   scripts/bench-remote-assemble.sh
#   ROUNDS=3 DIR=/var/tmp/minfer-bench scripts/bench-remote-assemble.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
rounds=${ROUNDS:-3}
dir=${DIR:-/var/tmp/minfer-bench}
command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || { echo "bench-remote-assemble: needs nginx (apt-get install -y nginx-light)" >&2; exit 1; }
command -v curl >/dev/null || { echo "bench-remote-assemble: needs curl" >&2; exit 1; }
cmake --preset release -DMINFER_BUILD_BENCH=ON >/dev/null
cmake --build --preset release -j2 --target minfer minfer-bench-quant-model >/dev/null
bin="$root/build/release"
mkdir -p "$dir"
dense="$dir/bench-L4-f16.gguf"
[ -s "$dense" ] || "$bin/bench/minfer-bench-quant-model" "$dense" --layers 4
res=$(mktemp -d -p "$dir" remote.XXXXXX)
mkdir -p "$res/www" "$res/nginx"
chmod 755 "$res" "$res/www"  # nginx's workers run as nobody
ln "$dense" "$res/www/a.gguf" 2>/dev/null || cp "$dense" "$res/www/a.gguf"
ln "$dense" "$res/www/b.gguf" 2>/dev/null || cp "$dense" "$res/www/b.gguf"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat >"$res/nginx/nginx.conf" <<CONF
daemon off;
worker_processes 1;
pid $res/nginx/nginx.pid;
error_log $res/nginx/error.log;
events { worker_connections 64; }
http {
    log_format bytes '\$request_uri \$http_range \$status \$body_bytes_sent';
    access_log $res/nginx/access.log bytes;
    client_body_temp_path $res/nginx; proxy_temp_path $res/nginx; fastcgi_temp_path $res/nginx;
    uwsgi_temp_path $res/nginx; scgi_temp_path $res/nginx;
    server { listen 127.0.0.1:$port; root $res/www; }
}
CONF
/usr/sbin/nginx -c "$res/nginx/nginx.conf" -p "$res/nginx" &
ngx=$!
trap 'kill $ngx 2>/dev/null; wait $ngx 2>/dev/null; rm -rf "$res"' EXIT
for _ in $(seq 50); do curl -s -o /dev/null "http://127.0.0.1:$port/a.gguf" -r 0-0 && break; sleep 0.1; done
kill -0 $ngx 2>/dev/null || { echo "bench-remote-assemble: nginx did not start ($res/nginx/error.log)" >&2; exit 1; }
url="http://127.0.0.1:$port"

served() { awk '{ n += $4 } END { print n + 0 }' "$res/nginx/access.log"; }
best() { sort -n | head -1; }
cat >"$res/passthrough.yaml" <<Y
merge_method: passthrough
slices:
  - sources:
      - model: $url/a.gguf
        layer_range: [0, 2]
  - sources:
      - model: $url/b.gguf
        layer_range: [2, 4]
Y
cat >"$res/recipe.yaml" <<Y
merge_method: passthrough
slices:
  - sources:
      - model: $dense
        layer_range: [0, 4]
tensors:
  - name: 'blk\\.[0-9]+\\.ffn_up\\.weight'
    model: $url/a.gguf
Y
cat >"$res/linear.yaml" <<Y
merge_method: linear
models:
  - model: $dense
    parameters: {weight: 0.5}
  - model: $url/a.gguf
    parameters: {weight: 0.5}
Y
size=$(stat -c %s "$dense")
printf '| case | remote files MiB | heads fetched B | tensors to fetch B (taken, less what the heads hold) | fetched (nginx) B | bound (heads' size + tensors + 1 MiB) B | within | minfer s | curl of the whole files s |\n|---|---:|---:|---:|---:|---:|---|---:|---:|\n'
for case in passthrough recipe linear; do
  case $case in passthrough) files=2 ;; *) files=1 ;; esac
  : >"$res/t_m"; : >"$res/t_c"
  for ((r = 0; r < rounds; r++)); do
    : >"$res/nginx/access.log"
    rm -f "$res/out.gguf"
    /usr/bin/time -f "%e" -o "$res/t" "$bin/cli/minfer" assemble "$res/$case.yaml" -o "$res/out.gguf" --json --quiet >"$res/json"
    cat "$res/t" >>"$res/t_m"
    fetched=$(served)
    /usr/bin/time -f "%e" -o "$res/t" sh -c 'for f in $(seq "$2"); do curl -s -o /dev/null "$1/a.gguf"; done' sh "$url" "$files"
    cat "$res/t" >>"$res/t_c"
  done
  heads=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["fetched"]["head_bytes"])' "$res/json")
  taken=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["fetched"]["tensor_bytes_planned"])' "$res/json")
  # the heads' own size (data offset of each remote file): the bound is stated with the head, not the first range
  head_size=$("$bin/cli/minfer" info "$dense" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["parts"][0]["data_offset"])')
  bound=$((files * head_size + taken + 1048576))
  within=$([ "$fetched" -le "$bound" ] && echo yes || echo NO)
  printf '| %s | %d | %s | %s | %s | %s | %s | %s | %s |\n' "$case" $((files * size / 1048576)) "$heads" "$taken" "$fetched" "$bound" "$within" \
    "$(best <"$res/t_m")" "$(best <"$res/t_c")"
  [ "$within" = yes ] || { echo "bench-remote-assemble: $case fetched $fetched bytes, more than $bound" >&2; exit 1; }
done
echo "rounds: $rounds (best of each side); load average: $(cut -d' ' -f1-3 /proc/loadavg)"
