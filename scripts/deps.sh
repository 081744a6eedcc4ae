#!/usr/bin/env bash
# Install the Debian packages the build needs, only those missing (run as root, as on CI).
set -euo pipefail
pkgs=(cmake ninja-build g++ clang libclang-rt-14-dev lld libgtest-dev libgmock-dev libbenchmark-dev
      libfmt-dev libcli11-dev nlohmann-json3-dev libxxhash-dev xxhash libssl-dev libcurl4-openssl-dev
      libyaml-cpp-dev libpcre2-dev libicu-dev
      python3-dev python3-numpy python3-pybind11 pybind11-dev python3-pytest python3-pip python3-venv
      python3-setuptools python3-wheel mypy ccache
      chromium chromium-driver python3-selenium abigail-tools pkgconf)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "deps: installing ${missing[*]}" >&2
  sudo_cmd=""; [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi
