#!/usr/bin/env bash
# bench/spin/compare.sh: SPIN on bench/spin/btrfs_race.pml next to crashsim on
# scenarios/btrfs/fast-fsync-vs-page-release.json, for the same race.
#
#   bench/spin/compare.sh            (from the repository root, or from anywhere)
#   REPS=7 bench/spin/compare.sh     (repetitions per measurement; default 5)
#   CRASHSIM=/path/to/crashsim ...   (another binary, e.g. main's, for a before/after)
#   CRASHSIM_ARGS=--dpor ...         (more options for every crashsim dfs search, e.g.
#                                     --dpor or --states locals; random and pct runs
#                                     take none)
#   SLOW=0 ...                       (skip the rows without a SPIN model: the xfs
#                                     race at dfs:1 and dfs:2 and btrfs
#                                     log-commit-batching at dfs:2; each runs
#                                     once, stopped by SIGINT after CAP seconds,
#                                     default 600, and then says so)
#
# Installs `spin` (and gcc) with apt-get when missing, builds crashsim when
# build/crashsim is missing, then times, each REPS times, in wall-clock time
# (the shell's clock around the process, median and best):
#   - the first counterexample on before-fix;
#   - exhaustive verification of fix-1 (and fix-2) within comparable bounds.
# SPIN's model generation and C compilation (spin -a, gcc -O2) are timed
# apart and NOT included in its figures; crashsim's figures include its whole
# process (loading the scenario, running the set-up, the PCT probes). Both
# tools' own clocks are shown too (pan's "elapsed time", crashsim's schedules
# line). crashsim's schedules, crash states, verdict and estimate come from
# its result JSON (fuzz --result, read with jq, installed when missing); only
# its own clock comes from the console. Everything SPIN writes (pan.*, pan, *.trail) and crashsim's repro
# files go to a temporary directory that is removed on exit.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$root"
REPS="${REPS:-5}"
scenario="scenarios/btrfs/fast-fsync-vs-page-release.json"
crashsim="${CRASHSIM:-$root/build/crashsim}"
SLOW="${SLOW:-1}"
CAP="${CAP:-600}"
# pan: depth limit far above the model's ~35 steps; a 2^18-slot hash table
# (the default 2^24 costs ~0.5 s of allocation alone, for < 60k states).
pan_flags=(-m10000 -w18 -n)

# ---- tools -------------------------------------------------------------------
need_root() {
    if [ "$(id -u)" -ne 0 ]; then
        echo "compare.sh: $1 is missing and installing it needs root" >&2
        exit 2
    fi
}
apt_install() {
    need_root "$*"
    if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null 2>&1; then
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
    fi
}
command -v spin >/dev/null 2>&1 || { echo "compare.sh: installing spin" >&2; apt_install spin; }
command -v gcc >/dev/null 2>&1 || { echo "compare.sh: installing gcc" >&2; apt_install gcc libc6-dev; }
command -v jq >/dev/null 2>&1 || { echo "compare.sh: installing jq" >&2; apt_install jq; }
if [ ! -x "$crashsim" ]; then
    echo "compare.sh: building crashsim" >&2
    if [ -f tools/setup.sh ]; then
        bash tools/setup.sh               # installs missing packages, meson setup, ninja
    else
        [ -f build/build.ninja ] || meson setup build >/dev/null
        ninja -C build >/dev/null
    fi
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/crashsim-spin.XXXXXX")"
trap 'rm -rf "$work"' EXIT
# A private copy, so that a rebuild of build/ by someone else cannot swap the
# binary in the middle of a measurement.
crashsim_src="$crashsim"
cp "$crashsim" "$work/crashsim"
crashsim="$work/crashsim"

now_ns() { date +%s%N; }
# median and minimum of the numbers on stdin, in milliseconds with 1 decimal
stats() { sort -n | awk '{v[NR]=$1} END {m=(NR%2)?v[(NR+1)/2]:(v[NR/2]+v[NR/2+1])/2; printf "%.1f %.1f\n", m/1e6, v[1]/1e6}'; }

# ---- SPIN: one verifier per configuration --------------------------------------
# build_pan NAME FLAGS...: spin -a and gcc into $work/NAME/pan; its wall time
# goes to $work/NAME/compile_ms.
build_pan() {
    local name="$1"; shift
    mkdir -p "$work/$name"
    cp "$here/btrfs_race.pml" "$work/$name/"
    local start end
    start=$(now_ns)
    (cd "$work/$name" && spin -a "$@" btrfs_race.pml >/dev/null &&
        gcc -O2 -DSAFETY -o pan pan.c)
    end=$(now_ns)
    echo $(((end - start) / 1000000)) >"$work/$name/compile_ms"
}
spin_configs=(v0_full v0_pb1 v0_pb2 v0_pb3 v1_full v1_pb1 v1_pb2 v1_pb3 v2_pb2 v1_nocrash)
declare -A spin_flags=(
    [v0_full]="-DVARIANT=0" [v0_pb1]="-DVARIANT=0 -DPB=1" [v0_pb2]="-DVARIANT=0 -DPB=2"
    [v0_pb3]="-DVARIANT=0 -DPB=3"
    [v1_full]="-DVARIANT=1" [v1_pb1]="-DVARIANT=1 -DPB=1" [v1_pb2]="-DVARIANT=1 -DPB=2"
    [v1_pb3]="-DVARIANT=1 -DPB=3"
    [v2_pb2]="-DVARIANT=2 -DPB=2" [v1_nocrash]="-DVARIANT=1 -DCRASH=0"
)

# run_pan NAME: REPS runs; sets spin_med spin_best spin_self spin_states
# spin_trans spin_errors spin_depth
run_pan() {
    local name="$1" times="" i start end out
    for ((i = 0; i < REPS; i++)); do
        rm -f "$work/$name"/*.trail
        start=$(now_ns)
        out=$(cd "$work/$name" && ./pan "${pan_flags[@]}" 2>&1) || true
        end=$(now_ns)
        times+="$((end - start))"$'\n'
        if ! grep -q "State-vector" <<<"$out"; then
            echo "compare.sh: pan $name did not run:" >&2; echo "$out" >&2; exit 1
        fi
    done
    read -r spin_med spin_best < <(printf '%s' "$times" | stats)
    spin_errors=$(sed -n 's/.*errors: \([0-9]*\).*/\1/p' <<<"$out")
    # the depth of the first error, else the deepest state reached
    spin_depth=$(sed -n 's/.*(at depth \([0-9]*\)).*/\1/p' <<<"$out" | head -1)
    [ -n "$spin_depth" ] || spin_depth=$(sed -n 's/.*depth reached \([0-9]*\).*/\1/p' <<<"$out")
    spin_states=$(awk '/states, stored/ {print $1; exit}' <<<"$out")
    spin_trans=$(awk '/transitions \(= stored\+matched\)/ {print $1; exit}' <<<"$out")
    spin_self=$(sed -n 's/.*elapsed time \([0-9.e+-]*\) seconds.*/\1/p' <<<"$out")
}

# ---- crashsim ------------------------------------------------------------------
# parse_crashsim OUTPUT RESULT: sets cs_schedules cs_crash cs_found cs_complete
# cs_interrupted cs_estimate from the run's result JSON (fuzz --result, read
# with jq) and cs_self from its console output (the result carries no clock:
# it is deterministic)
parse_crashsim() {
    local out="$1" result="$2"
    if ! jq -e '.crashsim_result' "$result" >/dev/null 2>&1; then
        echo "compare.sh: crashsim wrote no result JSON at $result:" >&2; echo "$out" >&2; exit 1
    fi
    cs_schedules=$(jq -r '.schedules_run' "$result")
    cs_crash=$(jq -r '.crash_states' "$result")
    cs_found=$(jq -r '.violations | length' "$result")
    cs_complete=$(jq -r 'if .dfs.complete == true then 1 else 0 end' "$result")
    cs_interrupted=$(jq -r 'if .interrupted then 1 else 0 end' "$result")
    cs_estimate=$(jq -r '.estimate.schedules // empty | floor' "$result")
    cs_self=$(sed -n 's/^schedules: .*steps: [0-9]*, \([0-9.]*\) s,.*/\1/p' <<<"$out")
}

# run_crashsim SCENARIO ARGS...: REPS runs of crashsim fuzz (once only per
# distinct SCENARIO ARGS; a row that repeats them reuses the figures); sets
# cs_med cs_best and what parse_crashsim sets
declare -A cs_memo=()
# dfs_args ARGS...: CRASHSIM_ARGS when ARGS name a dfs strategy (the options
# it gives, --dpor and --states, are dfs's alone).
dfs_args() {
    case " $* " in *" --strategy dfs"*) printf '%s' "${CRASHSIM_ARGS:-}" ;; esac
}

run_crashsim() {
    local key="$*"
    if [ -n "${cs_memo[$key]:-}" ]; then
        read -r cs_med cs_best cs_schedules cs_crash cs_self cs_found cs_complete cs_interrupted \
            cs_estimate <<<"${cs_memo[$key]}"
        return
    fi
    local scen="$1"; shift
    local times="" i start end out
    for ((i = 0; i < REPS; i++)); do
        start=$(now_ns)
        rm -f "$work/result.json"
        # shellcheck disable=SC2046 # dfs_args is options, split on purpose
        out=$("$crashsim" fuzz "$scen" --quiet --out "$work" --result "$work/result.json" "$@" $(dfs_args "$@") 2>&1) ||
            true
        end=$(now_ns)
        times+="$((end - start))"$'\n'
        parse_crashsim "$out" "$work/result.json"
        if [ "$cs_found" -eq 0 ] && [ "$cs_complete" -eq 0 ]; then
            echo "compare.sh: crashsim fuzz $scen $* gave neither a violation nor a complete search:" >&2
            echo "$out" >&2; exit 1
        fi
    done
    read -r cs_med cs_best < <(printf '%s' "$times" | stats)
    cs_memo[$key]="$cs_med $cs_best $cs_schedules $cs_crash $cs_self $cs_found $cs_complete $cs_interrupted ${cs_estimate:--}"
}

# run_crashsim_capped SCENARIO ARGS...: one run, stopped by SIGINT after CAP
# seconds (crashsim then prints what it explored and "interrupted:")
run_crashsim_capped() {
    local scen="$1"; shift
    local start end out
    start=$(now_ns)
    rm -f "$work/result.json"
    # shellcheck disable=SC2046 # dfs_args is options, split on purpose
    out=$(timeout -s INT "$CAP" "$crashsim" fuzz "$scen" --quiet --out "$work" --result "$work/result.json" "$@" \
        $(dfs_args "$@") 2>&1) ||
        true
    end=$(now_ns)
    cs_med=$(awk -v t="$((end - start))" 'BEGIN {printf "%.1f", t/1e6}')
    cs_best="$cs_med"
    parse_crashsim "$out" "$work/result.json"
}

# ---- the table -----------------------------------------------------------------
failures=0
rows=()
row() {  # row MEASUREMENT SPIN_CONFIG CRASHSIM_CONFIG EXPECT(found|proof|agree)
    local what="$1" spin_cfg="$2" cs_cfg="$3" expect="$4" ok="ok"
    if [ "$expect" = agree ]; then  # both find the race or both prove its absence
        if [ "${spin_errors:-0}" -ge 1 ]; then expect=found; else expect=proof; fi
    fi
    if [ "$expect" = found ]; then
        [ "${spin_errors:-0}" -ge 1 ] || ok="SPIN found nothing"
        [ "$cs_found" -ge 1 ] || ok="crashsim found nothing"
        local spin_what="error at depth $spin_depth, $spin_states st"
        local cs_what="found at #$cs_schedules, $cs_crash cs"
    else
        [ "${spin_errors:-1}" -eq 0 ] || ok="SPIN reported errors"
        [ "$cs_complete" -ge 1 ] && [ "$cs_found" -eq 0 ] || ok="crashsim incomplete or violated"
        local spin_what="0 err, $spin_states st, $spin_trans tr"
        local cs_what="$cs_schedules sch, $cs_crash cs"
    fi
    [ "$ok" = ok ] || failures=$((failures + 1))
    local ratio
    ratio=$(awk -v a="$spin_med" -v b="$cs_med" -v c="$spin_best" -v d="$cs_best" \
        'BEGIN {printf "%.3f (best %.3f)", a/b, c/d}')
    rows+=("$(printf '%s|%s|%s ms (best %s; pan %ss)|%s|%s|%s ms (best %s; self %ss)|%s|%s|%s' \
        "$what" "$spin_cfg" "$spin_med" "$spin_best" "$spin_self" "$spin_what" \
        "$cs_cfg" "$cs_med" "$cs_best" "$cs_self" "$cs_what" "$ratio" "$ok")")
}
# row_alone MEASUREMENT CRASHSIM_CONFIG: a crashsim row without a SPIN model,
# after run_crashsim_capped; a search cut by CAP says so and how far it got
row_alone() {
    local what="$1" cs_cfg="$2" ok="ok" cs_what
    if [ "$cs_interrupted" -ge 1 ]; then
        cs_what="NOT complete: stopped after ${CAP} s at $cs_schedules sch, $cs_crash cs (estimate: about ${cs_estimate:-?} sch)"
        ok="capped"
    elif [ "$cs_complete" -ge 1 ]; then
        cs_what="$cs_schedules sch, $cs_crash cs"
    elif [ "$cs_found" -ge 1 ]; then
        cs_what="found at #$cs_schedules, $cs_crash cs"
    else
        cs_what="neither complete nor a violation"; ok="crashsim incomplete"
        failures=$((failures + 1))
    fi
    rows+=("$(printf '%s|%s|%s|%s|%s|%s ms (1 run; self %ss)|%s|%s|%s' \
        "$what" "(no SPIN model)" "-" "-" "$cs_cfg" "$cs_med" "$cs_self" "$cs_what" "-" "$ok")")
}

echo "compare.sh: compiling SPIN verifiers (spin -a, gcc -O2 -DSAFETY; not counted below)" >&2
# Two compilations at a time (before any measurement, so they disturb none).
pids=()
for name in "${spin_configs[@]}"; do
    # shellcheck disable=SC2086
    build_pan "$name" ${spin_flags[$name]} &
    pids+=($!)
    if [ ${#pids[@]} -ge 2 ]; then wait "${pids[0]}"; pids=("${pids[@]:1}"); fi
done
for pid in "${pids[@]}"; do wait "$pid"; done
for name in "${spin_configs[@]}"; do
    [ -x "$work/$name/pan" ] || { echo "compare.sh: building pan for $name failed" >&2; exit 1; }
done

echo "compare.sh: measuring, $REPS runs each" >&2
race="$scenario"
# before-fix and fix-1 at bounds 1, 2 and 3, SPIN with the same bound: before-fix
# to the first counterexample, fix-1 a complete proof.
for v in 0 1; do
    variant=$([ "$v" = 0 ] && echo before-fix || echo fix-1)
    for pb in 1 2 3; do
        run_pan "v${v}_pb${pb}"
        run_crashsim "$race" --variant "$variant" --strategy "dfs:$pb" --no-shrink
        row "$variant, bound $pb" "spin -DPB=$pb" "dfs:$pb" agree
    done
done
# First counterexample, before-fix, against SPIN without a bound.
run_pan v0_full
run_crashsim "$race" --variant before-fix --strategy dfs:2 --no-shrink
row "before-fix: first counterexample" "spin all interleavings" "dfs:2" found
run_crashsim "$race" --variant before-fix --strategy pct:3 --no-shrink
row "before-fix: first counterexample" "spin all interleavings" "pct:3, seed 0" found
run_crashsim "$race" --variant before-fix --strategy random --no-shrink
row "before-fix: first counterexample" "spin all interleavings" "random, seed 0" found
# Exhaustive verification against SPIN without a bound, and fix-2.
run_pan v1_full
run_crashsim "$race" --variant fix-1 --strategy dfs:2 --no-shrink
row "fix-1: exhaustive (spin: no bound)" "spin all interleavings" "dfs:2" proof
run_pan v1_nocrash
row "fix-1: exhaustive (spin: no bound, no cache)" "spin -DCRASH=0" "dfs:2" proof
run_pan v2_pb2
run_crashsim "$race" --variant fix-2 --strategy dfs:2 --no-shrink
row "fix-2: exhaustive, bound 2" "spin -DPB=2" "dfs:2" proof
# Scenarios without a SPIN model, once each, capped.
if [ "$SLOW" != 0 ]; then
    echo "compare.sh: the rows without a SPIN model, once each, at most $CAP s each" >&2
    for pb in 1 2; do
        run_crashsim_capped scenarios/xfs/delalloc-writeback-race.json --variant fix --strategy "dfs:$pb"
        row_alone "xfs delalloc-writeback-race fix, bound $pb" "dfs:$pb"
    done
    run_crashsim_capped scenarios/btrfs/log-commit-batching.json --variant jiffy-sleep --strategy dfs:2
    row_alone "btrfs log-commit-batching jiffy-sleep, bound 2" "dfs:2"
fi

echo
echo "SPIN $(spin -V | sed 's/Spin Version //') vs crashsim, $(date -u +%Y-%m-%d), $(nproc) cores; wall time, median of $REPS runs"
echo "SPIN compile time per verifier (spin -a + gcc -O2 -DSAFETY, two at a time), excluded below, ms:"
for name in "${spin_configs[@]}"; do
    printf '  %-11s %-28s %s\n' "$name" "${spin_flags[$name]}" "$(cat "$work/$name/compile_ms")"
done
echo "crashsim: $crashsim_src ($(cd "$root" && git describe --always --dirty 2>/dev/null || echo "no git"), the checkout of compare.sh)${CRASHSIM_ARGS:+, with $CRASHSIM_ARGS}"
echo "st = states stored, tr = transitions, sch = schedules, cs = crash states checked; ratio = SPIN median / crashsim median (> 1: crashsim faster)"
echo
{
    echo "measurement|SPIN model|SPIN time|SPIN result|crashsim run|crashsim time|crashsim result|SPIN/crashsim|check"
    printf '%s\n' "${rows[@]}"
} | column -t -s '|'
if [ "$failures" -ne 0 ]; then
    echo "compare.sh: $failures measurement(s) did not give the expected verdict" >&2
    exit 1
fi
