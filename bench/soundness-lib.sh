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
    soundness_name="$name"
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

# soundness_fuzz SCEN VARIANT P CAP [ARGS...]: one dfs:P search of the
# variant, every violation kept, capped at CAP schedules: its console in
# $work/out.txt, its result in $work/result.json, in $fuzz_ms the
# milliseconds fuzz took (the process alone), and in $distinct the
# distinct crash states without a violation that fuzz printed (one job: the
# verdict memo's keys), "-" where it printed none. Returns 1, with the
# console's end on stderr, when fuzz wrote no result (it exits 1 on a
# violation, so only a missing result is an error).
soundness_fuzz() {
    local scen="$1" variant="$2" p="$3" cap="$4"
    shift 4
    local t0
    rm -f "$work/result.json"
    t0=$(date +%s%N)
    "$crashsim" fuzz "$scen" --variant "$variant" --strategy "dfs:$p" --all --quiet --no-shrink \
        --schedules "$cap" --out "$work" --result "$work/result.json" "$@" >"$work/out.txt" 2>&1 || true
    # shellcheck disable=SC2034 # read by the scripts that source this file
    fuzz_ms=$(( ($(date +%s%N) - t0) / 1000000 ))
    rm -f "$work"/repro-*.json
    distinct=$(sed -nE 's/^distinct crash states without a violation: ([0-9]+).*/\1/p' "$work/out.txt")
    distinct="${distinct:--}"
    if ! jq -e '.crashsim_result' "$work/result.json" >/dev/null 2>&1; then
        echo "$soundness_name: no result for $scen $variant dfs:$p $*:" >&2
        tail -5 "$work/out.txt" >&2
        return 1
    fi
}
