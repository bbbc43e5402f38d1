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
                   nlohmann-json3-dev doctest-dev libcli11-dev libjemalloc-dev
                   fuse3 libfuse3-dev e2fsprogs xfsprogs btrfs-progs)

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

# The test command's second build (tools/test): AddressSanitizer and UBSan
# with every report fatal (-fno-sanitize-recover) and warnings as errors.
# sim/fiber.hpp tells ASan of every fiber switch. GCC's -fsanitize=undefined
# leaves out float-cast-overflow, so it is named too. GCC 12 gives false
# -Wmaybe-uninitialized warnings under -fsanitize=address (inside std::variant
# and <regex>, GCC bug 105616); the first build keeps that warning as an error.
# It compiles at -O1, as AddressSanitizer's documentation advises: half the
# compile time of -O3 under the sanitizers (xfs/file.cpp 12 s against 25 s),
# and the first build already runs every case optimised.
crashsim_sanitize_build="${CRASHSIM_SANITIZE_BUILD:-$crashsim_root/build-san}"
crashsim_sanitize_options=(-Dwerror=true -Db_sanitize=address,undefined -Doptimization=1
    "-Dcpp_args=-fsanitize=float-cast-overflow -fno-sanitize-recover=all -Wno-maybe-uninitialized"
    "-Dcpp_link_args=-fsanitize=float-cast-overflow")

# Configures (once) and builds DIR with the given meson options. Quiet when it
# works; on a failure it prints the compiler's output and returns non-zero.
crashsim_build_dir() {
    local dir="$1"
    shift
    local log
    log="$(mktemp)"
    if [ ! -f "$dir/build.ninja" ]; then
        if ! meson setup "$dir" "$crashsim_root" "$@" >"$log" 2>&1; then
            cat "$log" >&2
            rm -f "$log"
            echo "setup: meson setup $dir failed (output above)" >&2
            return 1
        fi
    fi
    if ! ninja -C "$dir" >"$log" 2>&1; then
        cat "$log" >&2
        rm -f "$log"
        echo "setup: the build in $dir failed (compiler output above)" >&2
        return 1
    fi
    rm -f "$log"
}

crashsim_build_all() {
    crashsim_build_dir "$crashsim_build"
}

crashsim_install_missing
# tools/fuzz installs more and builds elsewhere.
[ "${CRASHSIM_SETUP_NO_BUILD:-}" = 1 ] || crashsim_build_all
