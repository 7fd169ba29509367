#!/usr/bin/env bash
# Installs the Debian packages tmc needs, and only those that are missing.
# Idempotent and silent when everything is already present (TOOLCHAIN.md lists why each is here).
set -euo pipefail

packages=(
  cmake ninja-build make g++ clang
  libmlir-19-dev mlir-19-tools llvm-19-dev llvm-19-tools
  libhalide14-0-dev libfmt-dev libgtest-dev libgmock-dev nlohmann-json3-dev libboost-dev curl
  python3 python3-numpy python3-torch
  g++-aarch64-linux-gnu qemu-user
)

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$p")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

echo "setup: installing ${missing[*]}"
sudo_cmd=()
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null || { echo "setup: need root (or sudo) to apt-get install ${missing[*]}" >&2; exit 1; }
  sudo_cmd=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null
echo "setup: done"
