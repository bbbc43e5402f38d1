#!/usr/bin/env bash
# Installs what crashsim needs from Debian's archive (only what is missing),
# then configures and builds it in ./build. Sourced by tools/gate and
# tools/test, so each of them works alone on a fresh Debian 12 machine.
set -euo pipefail

crashsim_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
crashsim_build="${CRASHSIM_BUILD:-$crashsim_root/build}"

# cmake is there only because doctest-dev ships a CMake package config and no
# pkg-config file: meson's dependency('doctest') finds it through cmake.
crashsim_packages=(meson ninja-build g++ pkg-config cmake libboost-context-dev
                   nlohmann-json3-dev doctest-dev libcli11-dev)

crashsim_install_missing() {
    local missing=()
    local package
    for package in "${crashsim_packages[@]}"; do
        if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
            missing+=("$package")
        fi
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    echo "setup: installing ${missing[*]}"
    local sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
        "${missing[@]}" >/dev/null
}

crashsim_build_all() {
    if [ ! -f "$crashsim_build/build.ninja" ]; then
        meson setup "$crashsim_build" "$crashsim_root" >/dev/null
    fi
    ninja -C "$crashsim_build" >/dev/null
}

crashsim_install_missing
crashsim_build_all
