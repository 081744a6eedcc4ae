#!/usr/bin/env bash
# The C API's ABI against its recorded baseline (libabigail, Debian's abigail-tools).
#   scripts/abi-check.sh LIB BASELINE HEADERS_DIR            check LIB against BASELINE
#   scripts/abi-check.sh --update LIB BASELINE HEADERS_DIR   write LIB's ABI as the new BASELINE
# LIB is a libminfer.so built with debug information (the ABI's types come from its DWARF); only the
# interfaces its headers declare and it exports are recorded (the C++ inside is not the ABI).
# The check passes when LIB's ABI equals the baseline's or only adds to it (functions, harmless enum
# additions), and when LIB's SONAME differs from the baseline's (an incompatible change was declared
# by bumping SOVERSION: record the new baseline with --update). It fails, printing abidiff's report,
# when anything of the baseline was removed or changed while the SONAME stayed the same.
# Exit: 0 pass, 1 ABI break without a SOVERSION bump, 2 usage or a tool failure.
set -uo pipefail
update=0
if [ "${1:-}" = "--update" ]; then update=1; shift; fi
[ $# -eq 3 ] || { echo "usage: $0 [--update] LIB BASELINE HEADERS_DIR" >&2; exit 2; }
lib=$1 baseline=$2 headers=$3
for tool in abidw abidiff readelf; do
  command -v "$tool" >/dev/null || { echo "abi-check: $tool not found (apt install abigail-tools binutils)" >&2; exit 2; }
done
[ -f "$lib" ] || { echo "abi-check: $lib not found" >&2; exit 2; }
# (read whole first: grep -q leaving early would give readelf SIGPIPE, a failure under pipefail)
sections=$(readelf -S "$lib") || { echo "abi-check: readelf cannot read $lib" >&2; exit 2; }
if ! grep -q "\.debug_info" <<< "$sections"; then
  echo "abi-check: $lib has no debug information: build it with -g (a Debug or RelWithDebInfo build)" >&2
  exit 2
fi
abidw_flags=(--headers-dir "$headers" --drop-private-types --exported-interfaces-only --no-corpus-path
             --no-comp-dir-path --no-show-locs --type-id-style hash)
if [ $update -eq 1 ]; then
  abidw "${abidw_flags[@]}" --out-file "$baseline" "$lib" || { echo "abi-check: abidw failed" >&2; exit 2; }
  echo "abi-check: wrote $baseline ($(grep -c '<elf-symbol' "$baseline") symbols)"
  exit 0
fi
[ -f "$baseline" ] || { echo "abi-check: no baseline $baseline (record one with --update)" >&2; exit 2; }
soname=$(readelf -d "$lib" | sed -n 's/.*Library soname: \[\(.*\)\].*/\1/p')
base_soname=$(sed -n "1s/.*soname='\([^']*\)'.*/\1/p" "$baseline")
if [ -z "$soname" ]; then echo "abi-check: $lib has no SONAME" >&2; exit 1; fi
if [ "$soname" != "$base_soname" ]; then
  echo "abi-check: SONAME $soname, baseline $base_soname: SOVERSION was bumped, any change is allowed;" \
       "record the new baseline with scripts/abi-check.sh --update"
  exit 0
fi
current=$(mktemp --suffix=.abi)
trap 'rm -f "$current"' EXIT
abidw "${abidw_flags[@]}" --out-file "$current" "$lib" || { echo "abi-check: abidw failed" >&2; exit 2; }
# --no-added-syms: additions are compatible and not reported; anything left is a removal or a change.
report=$(abidiff --no-added-syms "$baseline" "$current")
rc=$?
if [ $rc -eq 0 ]; then
  added=$(abidiff "$baseline" "$current" | sed -n 's/.*Functions changes summary: .*, \([0-9]*\) Added.*/\1/p')
  echo "abi-check: $soname matches its baseline (${added:-0} functions added)"
  exit 0
fi
if [ $((rc & 3)) -ne 0 ]; then echo "abi-check: abidiff failed ($rc): $report" >&2; exit 2; fi
echo "abi-check: the ABI of $soname changed without a SOVERSION bump (abidiff exit $rc):"
echo "$report"
echo "Either keep the ABI, or bump SOVERSION (CMakeLists.txt) and MINFER_C_API_VERSION (minfer.h) and record the baseline with --update."
exit 1
