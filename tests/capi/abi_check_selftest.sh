#!/usr/bin/env bash
# scripts/abi-check.sh must catch what it exists for: small C libraries with a header, built as
# version 1 (the baseline) and as changed versions, each checked against version 1's baseline.
#   usage: abi_check_selftest.sh CC WORKDIR
set -uo pipefail
cc=$1 work=$2
check=$(cd "$(dirname "$0")/../.." && pwd)/scripts/abi-check.sh
rm -rf "$work"; mkdir -p "$work"
failures=0

# build NAME SONAME HEADER_TEXT SOURCE_TEXT: lib NAME/libt.so with headers in NAME/include
build() {
  mkdir -p "$work/$1/include"
  printf '%s\n' "$3" > "$work/$1/include/t.h"
  printf '#include "t.h"\n%s\n' "$4" > "$work/$1/t.c"
  "$cc" -g -O0 -shared -fPIC -I"$work/$1/include" -Wl,-soname,"$2" -o "$work/$1/libt.so" "$work/$1/t.c" ||
    { echo "cannot build $1"; exit 2; }
}
# expect NAME RC: the check of NAME against the baseline exits RC
expect() {
  out=$("$check" "$work/$1/libt.so" "$work/base.abi" "$work/$1/include" 2>&1)
  rc=$?
  if [ "$rc" -ne "$2" ]; then
    echo "FAIL: $1: abi-check exited $rc, expected $2"; echo "$out"; failures=$((failures + 1))
  else
    echo "ok: $1 (exit $rc): $(echo "$out" | head -1)"
  fi
}

h1='struct t_pair { int a; int b; };
int t_add(int x, int y);
int t_sum(const struct t_pair* p);'
c1='int t_add(int x, int y) { return x + y; }
int t_sum(const struct t_pair* p) { return p->a + p->b; }'
build v1 libt.so.0 "$h1" "$c1"
"$check" --update "$work/v1/libt.so" "$work/base.abi" "$work/v1/include" >/dev/null || { echo "FAIL: --update"; exit 1; }
expect v1 0

build added libt.so.0 "$h1
int t_mul(int x, int y);" "$c1
int t_mul(int x, int y) { return x * y; }"
expect added 0

build param libt.so.0 'struct t_pair { int a; int b; };
int t_add(long x, int y);
int t_sum(const struct t_pair* p);' 'int t_add(long x, int y) { return (int)x + y; }
int t_sum(const struct t_pair* p) { return p->a + p->b; }'
expect param 1

build removed libt.so.0 'struct t_pair { int a; int b; };
int t_sum(const struct t_pair* p);' 'int t_sum(const struct t_pair* p) { return p->a + p->b; }'
expect removed 1

build layout libt.so.0 'struct t_pair { long a; int b; };
int t_add(int x, int y);
int t_sum(const struct t_pair* p);' 'int t_add(int x, int y) { return x + y; }
int t_sum(const struct t_pair* p) { return (int)p->a + p->b; }'
expect layout 1

build bumped libt.so.1 'struct t_pair { long a; int b; };
int t_add(long x, int y);
int t_sum(const struct t_pair* p);' 'int t_add(long x, int y) { return (int)x + y; }
int t_sum(const struct t_pair* p) { return (int)p->a + p->b; }'
expect bumped 0

[ $failures -eq 0 ] && echo "abi-check self-test: ok"
exit $((failures > 0))
