# bench/soundness-lib.sh: what bench/dpor-soundness.sh and
# bench/reduction-soundness.sh share. Sourced, not run.
#
# soundness_setup NAME DEFAULT_BOUNDS DEFAULT_CAP: cd to the repository root;
# BOUNDS, CAP and ONLY from the environment (or the defaults); jq and the
# binary (CRASHSIM, default build/crashsim) checked; a private copy of the
# binary in $work (so that a rebuild of build/ cannot swap it mid-run), which
# is removed on exit.
soundness_setup() {
    local name="$1"
    root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
    cd "$root"
    BOUNDS="${BOUNDS:-$2}"
    CAP="${CAP:-$3}"
    ONLY="${ONLY:-}"
    crashsim="${CRASHSIM:-$root/build/crashsim}"
    command -v jq >/dev/null 2>&1 || { echo "$name: jq is missing" >&2; exit 2; }
    [ -x "$crashsim" ] || { echo "$name: $crashsim is missing (ninja -C build)" >&2; exit 2; }
    work="$(mktemp -d "${TMPDIR:-/tmp}/crashsim-${name%.sh}.XXXXXX")"
    trap 'rm -rf "$work"' EXIT
    cp "$crashsim" "$work/crashsim"
    crashsim="$work/crashsim"
}

# soundness_selected SCEN: whether ONLY (words, any of which the path must
# contain) keeps the scenario; an empty ONLY keeps every one.
soundness_selected() {
    [ -z "$ONLY" ] && return 0
    local word
    for word in $ONLY; do case "$1" in *"$word"*) return 0 ;; esac; done
    return 1
}
