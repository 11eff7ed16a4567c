#!/usr/bin/env bash
# Installs what mhacfg needs on Debian 12 (bookworm) when it is missing. Idempotent; run as root or
# with sudo available. Set MHACFG_SETUP_BROWSER=0 to skip Chromium (only the report browser test uses it);
# MHACFG_SETUP_FUZZ=1 adds clang with libFuzzer and the sanitizers (scripts/fuzz.sh).
set -euo pipefail

packages=(
  build-essential cmake git
  libboost-program-options-dev nlohmann-json3-dev libeigen3-dev catch2 libbenchmark-dev
  python3 python3-jsonschema python3-dev pybind11-dev python3-matplotlib
)
if [ "${MHACFG_SETUP_BROWSER:-1}" = "1" ]; then
  packages+=(chromium)
fi
if [ "${MHACFG_SETUP_FUZZ:-0}" = "1" ]; then
  packages+=(clang libclang-rt-14-dev)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "mhacfg setup: installing ${missing[*]}" >&2
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "mhacfg setup: need root or sudo to install ${missing[*]}" >&2; exit 1; }
  sudo_cmd=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
