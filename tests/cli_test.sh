#!/bin/sh
# End-to-end tests of the crashsim command line: exit codes, what each verb
# prints, the files it writes (and does not write), and the one-line message
# on bad input. Usage: tests/cli_test.sh PATH-TO-CRASHSIM (run from anywhere;
# it works from the source root). Prints "ok - NAME" / "not ok - NAME" per
# check and "cli: N passed, M failed"; exits 1 when a check failed.

if [ $# -ne 1 ]; then
    echo "usage: $0 PATH-TO-CRASHSIM" >&2
    exit 2
fi
case $1 in
    /*) BIN=$1 ;;
    *) BIN=$(pwd)/$1 ;;
esac
if [ ! -x "$BIN" ]; then
    echo "cli_test: $BIN is not an executable" >&2
    exit 2
fi
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 2

TMP=$(mktemp -d "${TMPDIR:-/tmp}/crashsim-cli.XXXXXX") || exit 2
trap 'rm -rf "$TMP"' EXIT
trap 'exit 130' INT TERM

SCEN=scenarios/btrfs/fast-fsync-vs-page-release.json
PASSED=0
FAILED=0

ok() {
    PASSED=$((PASSED + 1))
    echo "ok - $1"
}
not_ok() {
    FAILED=$((FAILED + 1))
    echo "not ok - $1"
    shift
    [ $# -eq 0 ] || printf '%s\n' "$@" | sed 's/^/#   /'
}

# run_cs OUT ERR ARGS...: runs crashsim, stdout to OUT, stderr to ERR; sets RC.
run_cs() {
    out=$1
    err=$2
    shift 2
    "$BIN" "$@" >"$out" 2>"$err"
    RC=$?
}

# show FILE: its first lines, for a failure report.
show() {
    if [ -s "$1" ]; then
        head -n 5 "$1" | sed 's/^/  | /'
    else
        echo "  (empty)"
    fi
}

lines_of() { wc -l <"$1" | tr -d ' '; }
# distinct_of FILE: the distinct crash states a fuzz run printed.
distinct_of() { sed -n 's/^distinct crash states without a violation: \([0-9]*\).*/\1/p' "$1"; }

# campaigns NAME: whether to run the campaign-sized checks that follow (a
# `check` of whole scenario sets, `perf` sweeps). CLI_CAMPAIGNS=skip leaves
# them out, as tools/test's sanitizer run does (they run there ten to thirty
# times slower and the first build runs them all); each block left out is
# counted and named, never silently dropped.
SKIPPED=0
campaigns() {
    [ "${CLI_CAMPAIGNS:-run}" != skip ] && return 0
    SKIPPED=$((SKIPPED + 1))
    echo "skip - $1 (campaign-sized; CLI_CAMPAIGNS=skip)"
    return 1
}
is_empty_dir() { [ -d "$1" ] && [ -z "$(ls -A "$1")" ]; }
files_in() { ls -A "$1" | tr '\n' ' '; }

# expect_rc NAME WANT OUT ERR
expect_rc() {
    if [ "$RC" -eq "$2" ]; then
        ok "$1 exits $2"
    else
        not_ok "$1 exits $2" "got exit $RC; stdout/stderr:" "$(show "$3")" "$(show "$4")"
    fi
}

# expect_grep NAME PATTERN FILE: FILE contains the fixed string PATTERN.
expect_grep() {
    if grep -qF -- "$2" "$3"; then
        ok "$1"
    else
        not_ok "$1" "no '$2' in:" "$(show "$3")"
    fi
}

# expect_egrep NAME REGEX FILE: FILE has a line matching the extended REGEX.
expect_egrep() {
    if grep -qE -- "$2" "$3"; then ok "$1"; else not_ok "$1" "no '$2' in:" "$(show "$3")"; fi
}

# expect_input_error NAME OUT ERR DIR [PREFIX]: exit 2, exactly one line on
# stderr that starts with "crashsim: " (or PREFIX), nothing on stdout, DIR
# still empty.
expect_input_error() {
    name=$1
    prefix=${5:-"crashsim: "}
    problems=""
    [ "$RC" -eq 2 ] || problems="$problems exit $RC (want 2);"
    [ "$(lines_of "$3")" -eq 1 ] || problems="$problems $(lines_of "$3") stderr lines (want 1);"
    case $(head -n 1 "$3") in
        "$prefix"*) ;;
        *) problems="$problems stderr does not start with '$prefix';" ;;
    esac
    [ -s "$2" ] && problems="$problems output on stdout;"
    is_empty_dir "$4" || problems="$problems left files: $(files_in "$4");"
    if [ -z "$problems" ]; then
        ok "$name"
    else
        not_ok "$name" "$problems" "stderr:" "$(show "$3")" "stdout:" "$(show "$2")"
    fi
}

# ---------------------------------------------------------------- run
for variant in before-fix fix-1 fix-2; do
    run_cs "$TMP/run.out" "$TMP/run.err" run "$SCEN" --variant "$variant"
    if [ "$variant" = before-fix ]; then
        expect_rc "run $variant" 1 "$TMP/run.out" "$TMP/run.err"
        expect_grep "run $variant prints VIOLATION fsync_durability" "VIOLATION fsync_durability" "$TMP/run.out"
        expect_grep "run $variant tells the page release" "try_release_extent_mapping removes extent map" "$TMP/run.out"
    else
        expect_rc "run $variant" 0 "$TMP/run.out" "$TMP/run.err"
        expect_grep "run $variant prints no violation" "no violation" "$TMP/run.out"
        expect_grep "run $variant: page release leaves the extent map" "leaves extent map" "$TMP/run.out"
        if grep -q VIOLATION "$TMP/run.out"; then
            not_ok "run $variant prints no VIOLATION"
        else
            ok "run $variant prints no VIOLATION"
        fi
    fi
    if [ -s "$TMP/run.err" ]; then
        not_ok "run $variant writes nothing on stderr" "$(show "$TMP/run.err")"
    else
        ok "run $variant writes nothing on stderr"
    fi
done

# run twice: byte-identical output.
run_cs "$TMP/run1.out" "$TMP/run1.err" run "$SCEN" --variant before-fix
run_cs "$TMP/run2.out" "$TMP/run2.err" run "$SCEN" --variant before-fix
if cmp -s "$TMP/run1.out" "$TMP/run2.out"; then
    ok "run before-fix twice gives identical output"
else
    not_ok "run before-fix twice gives identical output"
fi

# ---------------------------------------------------------------- fuzz + replay
for strategy in random pct:3; do
    out_dir=$TMP/fuzz-$(echo "$strategy" | tr ':' '_')
    mkdir "$out_dir"
    run_cs "$TMP/fuzz.out" "$TMP/fuzz.err" fuzz "$SCEN" --variant before-fix --strategy "$strategy" \
        --seed 0 --schedules 10000 --out "$out_dir"
    name="fuzz before-fix --strategy $strategy"
    expect_rc "$name" 1 "$TMP/fuzz.out" "$TMP/fuzz.err"
    expect_grep "$name prints schedules/s" "schedules/s" "$TMP/fuzz.out"
    expect_grep "$name prints crash states checked" "crash states checked" "$TMP/fuzz.out"
    expect_grep "$name prints VIOLATION fsync_durability" "VIOLATION fsync_durability" "$TMP/fuzz.out"
    count=$(ls -A "$out_dir" | wc -l | tr -d ' ')
    repros=$(ls -A "$out_dir" | grep -c '^repro-.*\.json$')
    if [ "$count" -eq 1 ] && [ "$repros" -eq 1 ]; then
        ok "$name writes exactly one repro file"
    else
        not_ok "$name writes exactly one repro file" "out dir holds: $(files_in "$out_dir")"
    fi
    repro=$(ls -A "$out_dir" | head -n 1)
    repro=$out_dir/$repro
    expect_grep "$name prints the replay command" "replay it with: crashsim replay $repro" "$TMP/fuzz.out"

    run_cs "$TMP/replay1.out" "$TMP/replay1.err" replay "$repro" --trace-text "$TMP/trace1.txt"
    expect_rc "replay of the $strategy repro" 1 "$TMP/replay1.out" "$TMP/replay1.err"
    expect_grep "replay of the $strategy repro matches its trace hash" "(matches the repro)" "$TMP/replay1.out"
    expect_grep "replay of the $strategy repro prints VIOLATION fsync_durability" \
        "VIOLATION fsync_durability" "$TMP/replay1.out"
    run_cs "$TMP/replay2.out" "$TMP/replay2.err" replay "$repro" --trace-text "$TMP/trace2.txt"
    if [ "$RC" -eq 1 ] && cmp -s "$TMP/replay1.out" "$TMP/replay2.out"; then
        ok "two replays of the $strategy repro print identical stdout"
    else
        not_ok "two replays of the $strategy repro print identical stdout" "second exit $RC"
    fi
    if [ -s "$TMP/trace1.txt" ] && cmp -s "$TMP/trace1.txt" "$TMP/trace2.txt"; then
        ok "two replays of the $strategy repro write identical --trace-text files"
    else
        not_ok "two replays of the $strategy repro write identical --trace-text files"
    fi
    if [ -e "$TMP/trace1.txt.tmp" ] || [ -e "$TMP/trace2.txt.tmp" ]; then
        not_ok "replay --trace-text leaves no temporary file"
    else
        ok "replay --trace-text leaves no temporary file"
    fi
    if [ "$(ls -A "$out_dir" | wc -l | tr -d ' ')" -eq 1 ]; then
        ok "replay of the $strategy repro writes nothing next to it"
    else
        not_ok "replay of the $strategy repro writes nothing next to it" "$(files_in "$out_dir")"
    fi
    rm -f "$TMP/trace1.txt" "$TMP/trace2.txt"
done

# Keep one repro for the tampering checks below.
GOOD_REPRO=$TMP/good-repro.json
cp "$TMP/fuzz-random/"repro-*.json "$GOOD_REPRO"

# --quiet leaves the story out but keeps the verdict.
mkdir "$TMP/quiet"
run_cs "$TMP/quiet.out" "$TMP/quiet.err" fuzz "$SCEN" --variant before-fix --strategy pct:3 --seed 0 \
    --schedules 10000 --out "$TMP/quiet" --quiet
if [ "$RC" -eq 1 ] && ! grep -q "page release (btrfs_releasepage) invoked" "$TMP/quiet.out" &&
    grep -qF "replay it with: crashsim replay" "$TMP/quiet.out"; then
    ok "fuzz --quiet omits the story and still reports the repro"
else
    not_ok "fuzz --quiet omits the story and still reports the repro" "exit $RC" "$(show "$TMP/quiet.out")"
fi

# fix-1 survives.
mkdir "$TMP/fix1"
run_cs "$TMP/fix1.out" "$TMP/fix1.err" fuzz "$SCEN" --variant fix-1 --schedules 2000 --out "$TMP/fix1"
expect_rc "fuzz fix-1 --schedules 2000" 0 "$TMP/fix1.out" "$TMP/fix1.err"
if is_empty_dir "$TMP/fix1"; then
    ok "fuzz fix-1 writes no repro"
else
    not_ok "fuzz fix-1 writes no repro" "out dir holds: $(files_in "$TMP/fix1")"
fi
expect_grep "fuzz fix-1 says no violation in 2000 schedules" "no violation in 2000 schedules" "$TMP/fix1.out"
expect_grep "fuzz fix-1 says what it explored" \
    "explored with at most 1 I/O reordering and 0 daemon wake-ups per schedule" "$TMP/fix1.out"
expect_grep "fuzz fix-1 says it cut the power inside recovery" \
    "crash during recovery: explored 1 nested power cut(s) per crash state: " "$TMP/fix1.out"
run_cs "$TMP/rc0.out" "$TMP/rc0.err" fuzz "$SCEN" --variant fix-1 --schedules 200 --recovery-crashes 0 --out "$TMP/fix1"
expect_rc "fuzz --recovery-crashes 0" 0 "$TMP/rc0.out" "$TMP/rc0.err"
expect_grep "fuzz --recovery-crashes 0 says what it did not explore" \
    "crash during recovery: not explored (bound 0" "$TMP/rc0.out"
run_cs "$TMP/rc2.out" "$TMP/rc2.err" fuzz "$SCEN" --variant fix-1 --strategy dfs:1 --schedules 200 \
    --recovery-crashes 2 --out "$TMP/fix1"
expect_grep "fuzz --recovery-crashes 2 says how deep it cut" \
    "crash during recovery: explored 2 nested power cut(s) per crash state" "$TMP/rc2.out"
# dfs: every interleaving by default, --dpor the reduced search; the same verdict.
run_cs "$TMP/dpor.out" "$TMP/dpor.err" fuzz "$SCEN" --variant fix-1 --strategy dfs:1 --dpor --quiet --out "$TMP/fix1"
expect_rc "fuzz --strategy dfs:1 --dpor" 0 "$TMP/dpor.out" "$TMP/dpor.err"
expect_grep "dfs says it reduces by dpor" "reduction: dynamic partial-order reduction" "$TMP/dpor.out"
expect_grep "dfs with dpor completes" "complete: " "$TMP/dpor.out"
run_cs "$TMP/nodpor.out" "$TMP/nodpor.err" fuzz "$SCEN" --variant fix-1 --strategy dfs:1 --quiet \
    --out "$TMP/fix1"
expect_rc "fuzz --strategy dfs:1 (no dpor)" 0 "$TMP/nodpor.out" "$TMP/nodpor.err"
expect_grep "dfs without --dpor says it takes every interleaving" \
    "reduction: sleep sets only: every interleaving within the bound" "$TMP/nodpor.out"
expect_grep "dfs without --dpor completes" "complete: " "$TMP/nodpor.out"
# The line a dfs run prints first walks within a run cap (the first
# counterexample within 10 ms) and says so; --walks takes them all.
expect_egrep "a dfs run's first line stops its walks at the run cap and says its precision" \
    '^estimate \([0-9]+ Knuth walks, seed 0\): about .* \(standard error [0-9]+%\).* \(walks stopped at [0-9]+ runs, a rough figure: --walks 256 or --estimate for a closer one\)' \
    "$TMP/nodpor.out"
run_cs "$TMP/walks.out" "$TMP/walks.err" fuzz "$SCEN" --variant fix-1 --strategy dfs:0 --walks 8 --quiet --out "$TMP/fix1"
expect_egrep "fuzz --walks 8 takes its 8 walks in a dfs run's first line" '^estimate \(8 Knuth walks, seed 0\)' "$TMP/walks.out"
if grep -q "walks stopped at" "$TMP/walks.out"; then not_ok "fuzz --walks 8 is not capped" "$(show "$TMP/walks.out")"; else ok "fuzz --walks 8 is not capped"; fi
# fuzz --estimate on dfs: stratified probes (heuristic sampling), close to the
# search (14,871 schedules at dfs:1); --walks N asks for Knuth's walks instead.
run_cs "$TMP/strat.out" "$TMP/strat.err" fuzz "$SCEN" --variant fix-1 --strategy dfs:1 --estimate
expect_rc "fuzz --estimate on dfs" 0 "$TMP/strat.out" "$TMP/strat.err"
expect_egrep "fuzz --estimate on dfs takes two stratified probes and says its runs" \
    '^estimate \(2 stratified probes, seed 0\): about (13[4-9][0-9]{2}|1[45][0-9]{3}|16[0-3][0-9]{2}) schedules \(standard error [0-9]+%\).* \([0-9]+ runs\)' \
    "$TMP/strat.out"
run_cs "$TMP/strat1.out" "$TMP/strat1.err" fuzz "$SCEN" --variant fix-1 --strategy dfs:1 --estimate --probes 1
expect_egrep "fuzz --estimate --probes 1" '^estimate \(1 stratified probe, seed 0\)' "$TMP/strat1.out"
run_cs "$TMP/knuthw.out" "$TMP/knuthw.err" fuzz "$SCEN" --variant fix-1 --strategy dfs:1 --estimate --walks 4
expect_egrep "fuzz --estimate --walks 4 takes Knuth's walks" '^estimate \(4 Knuth walks, seed 0\)' "$TMP/knuthw.out"
# Under a bound dpor runs without sleep sets and takes more schedules than
# they do on this race (33,421 against 14,871 at dfs:1); what it must keep is
# every crash state: the same distinct crash states as the unreduced search.
dpor_n=$(distinct_of "$TMP/dpor.out")
nodpor_n=$(distinct_of "$TMP/nodpor.out")
if [ -n "$dpor_n" ] && [ "$dpor_n" = "$nodpor_n" ] && [ "$dpor_n" -gt 0 ]; then
    ok "--dpor judges the same distinct crash states as the unreduced search ($dpor_n)"
else
    not_ok "--dpor judges the same distinct crash states as the unreduced search" "dpor '$dpor_n', without '$nodpor_n'"
fi

# fuzz --states locals: visited states cut revisits and keep every distinct
# crash state; a table at its --max-memory bound says how many states it did
# not remember; check mode says what it compared and counts collisions.
schedules_of() { sed -n 's/^complete: \([0-9]*\) schedules.*/\1/p' "$1"; }
run_cs "$TMP/states.out" "$TMP/states.err" fuzz "$SCEN" --variant fix-1 --strategy dfs:3 --states locals \
    --quiet --out "$TMP/fix1"
expect_rc "fuzz --states locals" 0 "$TMP/states.out" "$TMP/states.err"
expect_egrep "fuzz --states locals says what it remembered and cut" \
    '^visited states: [1-9][0-9]* distinct remembered \(key: the tasks. declared live locals\), [1-9][0-9]* runs cut' \
    "$TMP/states.out"
# dfs:3: the first bound whose visits do not fit 1 MiB (24,576 entries).
run_cs "$TMP/states-all.out" "$TMP/states-all.err" fuzz "$SCEN" --variant fix-1 --strategy dfs:3 --quiet \
    --out "$TMP/fix1"
run_cs "$TMP/states-mem.out" "$TMP/states-mem.err" fuzz "$SCEN" --variant fix-1 --strategy dfs:3 \
    --states locals --max-memory 1 --quiet --out "$TMP/fix1"
expect_rc "fuzz --states locals --max-memory 1" 0 "$TMP/states-mem.out" "$TMP/states-mem.err"
expect_egrep "fuzz --max-memory 1 says how many states it did not remember" \
    '^visited states: [1-9][0-9]* states not remembered: the table reached its bound of 1 MiB per job' \
    "$TMP/states-mem.out"
cached_n=$(schedules_of "$TMP/states.out")
bounded_n=$(schedules_of "$TMP/states-mem.out")
all_n=$(schedules_of "$TMP/states-all.out")
if [ -n "$cached_n" ] && [ -n "$bounded_n" ] && [ -n "$all_n" ] && [ "$cached_n" -lt "$bounded_n" ] &&
    [ "$bounded_n" -lt "$all_n" ] && [ "$(distinct_of "$TMP/states.out")" = "$(distinct_of "$TMP/states-all.out")" ] &&
    [ "$(distinct_of "$TMP/states-mem.out")" = "$(distinct_of "$TMP/states-all.out")" ]; then
    ok "a bounded table runs more than the whole one and fewer than none, with the same crash states"
else
    not_ok "a bounded table runs more than the whole one and fewer than none, with the same crash states" \
        "schedules: cached '$cached_n', bounded '$bounded_n', stateless '$all_n'"
fi
run_cs "$TMP/check.out" "$TMP/check.err" fuzz "$SCEN" --variant fix-1 --strategy dfs:1 --states locals \
    --check-fingerprints --quiet --out "$TMP/fix1"
expect_rc "fuzz --check-fingerprints" 0 "$TMP/check.out" "$TMP/check.err"
expect_egrep "check mode says what it compared" \
    '^fingerprint check: [1-9][0-9]* revisits followed for up to 8 decisions each, [1-9][0-9]* decisions compared, 0 where' \
    "$TMP/check.out"
expect_egrep "check mode counts the key hits that are collisions" \
    '^fingerprint check: 0 key hits whose states differ in what the key hashes' "$TMP/check.out"
# The footprint check: every task step's footprint against what it changed.
run_cs "$TMP/fpcheck.out" "$TMP/fpcheck.err" fuzz "$SCEN" --variant fix-1 --strategy dfs:0 --check-footprints \
    --quiet --out "$TMP/fix1"
expect_rc "fuzz --check-footprints" 0 "$TMP/fpcheck.out" "$TMP/fpcheck.err"
expect_egrep "the footprint check says what it compared and found" \
    '^footprint check: [1-9][0-9]* task steps compared, 0 kind\(s\) of step changed a resource' "$TMP/fpcheck.out"
run_cs "$TMP/fpomit.out" "$TMP/fpomit.err" fuzz "$SCEN" --variant fix-1 --strategy dfs:0 --check-footprints \
    --footprint-omit btrfs.em_tree --quiet --out "$TMP/fix1"
expect_rc "fuzz --check-footprints catches a resource left out of every footprint" 5 "$TMP/fpomit.out" \
    "$TMP/fpomit.err"
expect_egrep "the footprint check names the task, the points and the resource" \
    '^footprint check: [a-z]+, from [a-z._]+ to [a-z._() ]+, changed btrfs.em_tree$' "$TMP/fpomit.out"

# ---------------------------------------------------------------- list
run_cs "$TMP/list.out" "$TMP/list.err" list
expect_rc "list" 0 "$TMP/list.out" "$TMP/list.err"
for word in release_extent_maps fix-3 hypothetical-exact btrfs.fsync.after_full_sync_check fsync_durability \
    delalloc_convert extent_size_hint sync_file_range fpunch xfs.convert.after_alloc \
    xfs.ioend.after_convert_commit active_trans hypothetical-removed-cancel-last removed-cancel-first \
    freeze_quiescence xfs.logworker.after_need_covered xfs.quiesce.drained; do
    expect_grep "list mentions $word" "$word" "$TMP/list.out"
done
expect_grep "list shows the counters a model declares" "checksum_lock_waits" "$TMP/list.out"
for word in "device faults" torn_writes lies-about-flush fault_outcome btrfs_check_super_csum xlog_verify_head \
    "ext4   none: no faults may be injected" misdirected_writes "bad tree block start" \
    "misdirected writes: none offered" latent_errors write_errors file_check_and_advance_wb_err \
    "write errors: none offered"; do
    expect_grep "list shows the fault model: $word" "$word" "$TMP/list.out"
done
# The toy model of the unit tests (tests/model/toy/) is linked into them only.
if grep -q '^  toy:' "$TMP/list.out"; then
    not_ok "list does not show the tests' toy model" "$(show "$TMP/list.out")"
else
    ok "list does not show the tests' toy model"
fi

# ---------------------------------------------------------------- xfs (generic/042, ~1 s)
XFS042=scenarios/xfs/generic-042.json
run_cs "$TMP/xfs.out" "$TMP/xfs.err" run "$XFS042" --variant before-fix
expect_rc "run xfs/generic-042 before-fix" 1 "$TMP/xfs.out" "$TMP/xfs.err"
expect_grep "run xfs/generic-042 before-fix prints VIOLATION no_stale_data" \
    "VIOLATION no_stale_data: file J offset 0 exposes stale contents" "$TMP/xfs.out"
expect_grep "run xfs/generic-042 before-fix converts the whole record written" \
    "xfs_bmapi_convert_delalloc converts the whole delalloc record [0, 65536) of inode J" "$TMP/xfs.out"
run_cs "$TMP/xfs.out" "$TMP/xfs.err" run "$XFS042" --variant fix
expect_rc "run xfs/generic-042 fix" 0 "$TMP/xfs.out" "$TMP/xfs.err"
expect_grep "run xfs/generic-042 fix converts at I/O completion" \
    "xfs_iomap_write_unwritten converts exactly [61440, 65536) of inode J to NORM" "$TMP/xfs.out"
mkdir "$TMP/xfs-fuzz"
run_cs "$TMP/xfs.out" "$TMP/xfs.err" fuzz scenarios/xfs/delalloc-writeback-race.json \
    --variant before-fix --strategy pct:3 --schedules 2000 --out "$TMP/xfs-fuzz" --quiet
expect_rc "fuzz xfs/delalloc-writeback-race before-fix" 1 "$TMP/xfs.out" "$TMP/xfs.err"
expect_grep "fuzz xfs/delalloc-writeback-race before-fix finds no_stale_data" \
    "VIOLATION no_stale_data" "$TMP/xfs.out"
run_cs "$TMP/xfs.out" "$TMP/xfs.err" fuzz scenarios/xfs/delalloc-writeback-race.json \
    --variant fix --strategy random --schedules 2000 --out "$TMP/xfs-fuzz"
expect_rc "fuzz xfs/delalloc-writeback-race fix" 0 "$TMP/xfs.out" "$TMP/xfs.err"
expect_grep "fuzz xfs/delalloc-writeback-race fix says no violation" \
    "no violation in 2000 schedules" "$TMP/xfs.out"

# ---------------------------------------------------------------- xfs freeze vs the log worker
FREEZE=scenarios/xfs/freeze-vs-log-worker.json
mkdir "$TMP/freeze"
# The race needs two runs of the worker (one pushes the AIL, one covers) before
# the drain: PCT meets that order within a few dozen schedules, random rarely.
run_cs "$TMP/freeze.out" "$TMP/freeze.err" fuzz "$FREEZE" --variant cancel-last --strategy pct:3 \
    --schedules 2000 --out "$TMP/freeze"
expect_rc "fuzz xfs/freeze-vs-log-worker cancel-last" 1 "$TMP/freeze.out" "$TMP/freeze.err"
expect_grep "fuzz cancel-last: the event checker reports it while the run goes on" \
    "freeze_quiescence violated while the run goes on" "$TMP/freeze.out"
expect_grep "fuzz cancel-last: the story says the value is no real kernel" \
    "active_trans = hypothetical-removed-cancel-last: a hypothetical setting, not a real kernel" "$TMP/freeze.out"
freeze_repro=$(ls "$TMP"/freeze/repro-*.json 2>/dev/null | head -n 1)
run_cs "$TMP/freeze-replay.out" "$TMP/freeze-replay.err" replay "$freeze_repro"
expect_rc "replay of the freeze_quiescence repro" 1 "$TMP/freeze-replay.out" "$TMP/freeze-replay.err"
expect_grep "replay of the freeze_quiescence repro matches its trace hash" "(matches the repro)" \
    "$TMP/freeze-replay.out"
run_cs "$TMP/freeze.out" "$TMP/freeze.err" fuzz "$FREEZE" --variant cancel-first --strategy pct:3 \
    --schedules 500 --out "$TMP/freeze"
expect_rc "fuzz xfs/freeze-vs-log-worker cancel-first" 0 "$TMP/freeze.out" "$TMP/freeze.err"
expect_grep "fuzz cancel-first counts the drain points freeze_quiescence watched" \
    "freeze_quiescence 500" "$TMP/freeze.out"

# ---------------------------------------------------------------- storage faults
LIAR=scenarios/faults/xfs-lying-cache.json
mkdir -p "$TMP/liar" "$TMP/torn"
run_cs "$TMP/liar.out" "$TMP/liar.err" fuzz "$LIAR" --variant fix --strategy random --schedules 200 --out "$TMP/liar"
expect_rc "fuzz faults/xfs-lying-cache" 1 "$TMP/liar.out" "$TMP/liar.err"
expect_grep "fuzz faults/xfs-lying-cache: the violation blames the device" \
    "the device lied, not the file system: FLUSH #" "$TMP/liar.out"
expect_grep "fuzz faults/xfs-lying-cache: the story tells the lie" "the write cache lied: FLUSH #" "$TMP/liar.out"
liar_repro=$(ls "$TMP"/liar/repro-*.json 2>/dev/null | head -n 1)
run_cs "$TMP/liar-replay.out" "$TMP/liar-replay.err" replay "$liar_repro"
expect_rc "replay of the lying-cache repro" 1 "$TMP/liar-replay.out" "$TMP/liar-replay.err"
expect_grep "replay of the lying-cache repro matches its trace hash" "(matches the repro)" "$TMP/liar-replay.out"
TORN=scenarios/faults/btrfs-torn-superblock.json
run_cs "$TMP/torn.out" "$TMP/torn.err" fuzz "$TORN" --variant fix-3 --strategy random --schedules 100 --out "$TMP/torn"
expect_rc "fuzz faults/btrfs-torn-superblock holds" 0 "$TMP/torn.out" "$TMP/torn.err"
expect_grep "fuzz faults/btrfs-torn-superblock: fault_outcome judged crash states" ", fault_outcome " "$TMP/torn.out"
expect_grep "fuzz faults/btrfs-torn-superblock: the summary counts what became of the faults" \
    "device faults: " "$TMP/torn.out"
if grep -q "device faults: .* 0 detected" "$TMP/torn.out"; then
    not_ok "fuzz faults/btrfs-torn-superblock detects a torn superblock" "$(show "$TMP/torn.out")"
else
    ok "fuzz faults/btrfs-torn-superblock detects a torn superblock"
fi
# Write I/O errors: dfs enumerates the failing completion; detected and survived, no violation.
WERR=scenarios/faults/xfs-write-error-fsync.json
mkdir -p "$TMP/werr"
run_cs "$TMP/werr.out" "$TMP/werr.err" fuzz "$WERR" --strategy dfs:0 --schedules 2000 --out "$TMP/werr"
expect_rc "fuzz dfs:0 faults/xfs-write-error-fsync holds" 0 "$TMP/werr.out" "$TMP/werr.err"
if grep -q "device faults: [1-9][0-9]* injected into crash states: [1-9][0-9]* survived, [1-9][0-9]* detected, 0 neither" \
    "$TMP/werr.out"; then
    ok "fuzz dfs:0 faults/xfs-write-error-fsync: write errors detected and survived"
else
    not_ok "fuzz dfs:0 faults/xfs-write-error-fsync: write errors detected and survived" "$(show "$TMP/werr.out")"
fi
# Misdirected writes: detected and survived, never silently wrong; check --junit carries the counts.
MIS=scenarios/faults/btrfs-misdirected-tree-block.json
mkdir -p "$TMP/mis"
run_cs "$TMP/mis.out" "$TMP/mis.err" fuzz "$MIS" --variant fix-3 --strategy dfs:1 --out "$TMP/mis"
expect_rc "fuzz dfs:1 faults/btrfs-misdirected-tree-block holds" 0 "$TMP/mis.out" "$TMP/mis.err"
if grep -q "device faults: [1-9][0-9]* injected into crash states: [1-9][0-9]* survived, [1-9][0-9]* detected, 0 neither" \
    "$TMP/mis.out"; then
    ok "fuzz dfs:1 faults/btrfs-misdirected-tree-block: misdirected writes detected and survived, none neither"
else
    not_ok "fuzz dfs:1 faults/btrfs-misdirected-tree-block: misdirected writes detected and survived, none neither" \
        "$(show "$TMP/mis.out")"
fi
run_cs "$TMP/mis-check.out" "$TMP/mis-check.err" check "$MIS" --junit "$TMP/mis/check.xml"
expect_rc "check faults/btrfs-misdirected-tree-block" 0 "$TMP/mis-check.out" "$TMP/mis-check.err"
expect_grep "check --junit: a fault row carries its counts as properties" '<property name="faults.detected" value="' \
    "$TMP/mis/check.xml"
expect_grep "check --junit: and in its system-out" "device faults: " "$TMP/mis/check.xml"
# The result file carries the fault counts, and merge adds two shards'.
mkdir -p "$TMP/torn-shards"
for k in 0 1; do
    run_cs "$TMP/torn$k.out" "$TMP/torn$k.err" fuzz "$TORN" --variant fix-3 --strategy random --schedules 100 \
        --shard "$k/2" --out "$TMP/torn-shards" --result "$TMP/torn-shards/result$k.json"
done
expect_grep "fuzz --result of faults/btrfs-torn-superblock carries the fault counts" '"detected": ' \
    "$TMP/torn-shards/result0.json"
run_cs "$TMP/torn-merge.out" "$TMP/torn-merge.err" merge "$TMP/torn-shards/result0.json" "$TMP/torn-shards/result1.json"
expect_rc "merge of two faults/btrfs-torn-superblock shards" 0 "$TMP/torn-merge.out" "$TMP/torn-merge.err"
expect_egrep "merge of two faults/btrfs-torn-superblock shards adds the fault counts" \
    "device faults: [0-9]* injected into crash states" "$TMP/torn-merge.out"
run_cs "$TMP/torn-check.out" "$TMP/torn-check.err" check "$TORN"
expect_rc "check faults/btrfs-torn-superblock (expect.faults detected and survived)" 0 "$TMP/torn-check.out" \
    "$TMP/torn-check.err"
expect_egrep "check faults/btrfs-torn-superblock: the row counts the faults" \
    "    device faults: [0-9]* injected into crash states: [1-9][0-9]* survived, [1-9][0-9]* detected" \
    "$TMP/torn-check.out"

# ---------------------------------------------------------------- ext4/jbd2: the re-logged buffer race
JBD2=scenarios/jbd2/relogged-buffer-checkpoint.json
run_cs "$TMP/jbd2.out" "$TMP/jbd2.err" run "$JBD2" --variant before-2-3
expect_rc "run jbd2/relogged-buffer-checkpoint before-2-3" 1 "$TMP/jbd2.out" "$TMP/jbd2.err"
expect_grep "run jbd2/relogged-buffer-checkpoint before-2-3: the shrinker drops transaction 1" \
    "jbd2: transaction 1's checkpoint list is empty: transaction dropped" "$TMP/jbd2.out"
expect_grep "run jbd2/relogged-buffer-checkpoint before-2-3: journal_integrity reports it" \
    "VIOLATION journal_integrity: transaction 1 committed" "$TMP/jbd2.out"
run_cs "$TMP/jbd2.out" "$TMP/jbd2.err" run "$JBD2" --variant fix
expect_rc "run jbd2/relogged-buffer-checkpoint fix" 0 "$TMP/jbd2.out" "$TMP/jbd2.err"
expect_grep "run jbd2/relogged-buffer-checkpoint fix: the checkpoint forces transaction 2's commit" \
    "belongs to transaction 2: forcing its commit" "$TMP/jbd2.out"
run_cs "$TMP/jbd2.out" "$TMP/jbd2.err" run scenarios/jbd2/unlink-reuse.json --variant fix
expect_rc "run jbd2/unlink-reuse fix" 0 "$TMP/jbd2.out" "$TMP/jbd2.err"
expect_grep "run jbd2/unlink-reuse fix: B takes A's freed inode number" "create B: inode 1 in transaction 2" "$TMP/jbd2.out"

# ---------------------------------------------------------------- bad input files
bad_count=0
for file in tests/bad_input/*.json; do
    bad_count=$((bad_count + 1))
    mkdir "$TMP/bad"
    run_cs "$TMP/bad.out" "$TMP/bad.err" run "$file" --trace-text "$TMP/bad/trace.txt"
    expect_input_error "run $file" "$TMP/bad.out" "$TMP/bad.err" "$TMP/bad" "crashsim: $file: \$"
    mkdir "$TMP/bad/o"
    run_cs "$TMP/bad.out" "$TMP/bad.err" fuzz "$file" --out "$TMP/bad/o"
    expect_input_error "fuzz $file" "$TMP/bad.out" "$TMP/bad.err" "$TMP/bad/o" "crashsim: $file: \$"
    rm -rf "$TMP/bad"
done
if [ "$bad_count" -ge 10 ]; then
    ok "tests/bad_input holds $bad_count files"
else
    not_ok "tests/bad_input holds $bad_count files (want at least 10)"
fi

# ---------------------------------------------------------------- bad flags
# bad_flag NAME [PREFIX] -- ARGS...: exit 2, one stderr line, no file left in
# $TMP/flag (the --out and --trace-text directory).
bad_flag() {
    flag_name=$1
    flag_prefix=$2
    shift 3
    rm -rf "$TMP/flag"
    mkdir "$TMP/flag"
    run_cs "$TMP/flag.out" "$TMP/flag.err" "$@"
    expect_input_error "$flag_name" "$TMP/flag.out" "$TMP/flag.err" "$TMP/flag" "$flag_prefix"
}
bad_flag "fuzz --strategy dfs2" "crashsim: --strategy" -- fuzz "$SCEN" --strategy dfs2 --out "$TMP/flag"
bad_flag "fuzz --strategy pct:0" "crashsim: --strategy" -- fuzz "$SCEN" --strategy pct:0 --out "$TMP/flag"
bad_flag "fuzz --strategy pct:" "crashsim: --strategy" -- fuzz "$SCEN" --strategy pct: --out "$TMP/flag"
bad_flag "fuzz --schedules 0" "crashsim: --schedules" -- fuzz "$SCEN" --schedules 0 --out "$TMP/flag"
bad_flag "fuzz --max-memory lots" "crashsim: --max-memory" -- fuzz "$SCEN" --strategy dfs:1 --states locals \
    --max-memory lots --out "$TMP/flag"
bad_flag "fuzz --dpor --jobs 2 without --split-depth" \
    "crashsim: --dpor: expected --split-depth D with --jobs above 1" -- \
    fuzz "$SCEN" --variant fix-1 --strategy dfs:1 --dpor --jobs 2 --out "$TMP/flag"
bad_flag "fuzz --dpor with --no-reduction" "crashsim: --dpor: expected no --no-reduction (dpor is a reduction), got both" -- \
    fuzz "$SCEN" --variant fix-1 --strategy dfs:1 --dpor --no-reduction --out "$TMP/flag"
bad_flag "fuzz --schedules abc" "crashsim: " -- fuzz "$SCEN" --schedules abc --out "$TMP/flag"
bad_flag "fuzz --check-footprints with random" \
    "crashsim: --check-footprints: expected only with --strategy dfs, got it with \"random\"" -- \
    fuzz "$SCEN" --strategy random --check-footprints --out "$TMP/flag"
bad_flag "fuzz --footprint-omit without --check-footprints" \
    "crashsim: --footprint-omit: expected --check-footprints, got none" -- \
    fuzz "$SCEN" --strategy dfs:0 --footprint-omit btrfs.em_tree --out "$TMP/flag"
bad_flag "fuzz --check-footprints --jobs 2" "crashsim: --check-footprints: expected one job and no shard" -- \
    fuzz "$SCEN" --strategy dfs:0 --check-footprints --jobs 2 --out "$TMP/flag"
bad_flag "fuzz --out /nonexistent/dir" "crashsim: --out" -- fuzz "$SCEN" --out /nonexistent/dir
bad_flag "fuzz --variant nosuch" "crashsim: $SCEN: \$.variants" -- fuzz "$SCEN" --variant nosuch --out "$TMP/flag"
bad_flag "run --variant nosuch" "crashsim: $SCEN: \$.variants" -- \
    run "$SCEN" --variant nosuch --trace-text "$TMP/flag/trace.txt"
bad_flag "run /nonexistent.json" "crashsim: /nonexistent.json: \$" -- \
    run /nonexistent.json --trace-text "$TMP/flag/trace.txt"
bad_flag "run without a scenario" "crashsim: " -- run
bad_flag "unknown verb" "crashsim: " -- frobnicate "$SCEN"
bad_flag "no verb" "crashsim: " --
bad_flag "run with an unknown flag" "crashsim: " -- run "$SCEN" --frobnicate
bad_flag "check /nonexistent.json" "crashsim: /nonexistent.json: \$" -- check /nonexistent.json
bad_flag "check tests/bad_input/unknown_op.json" "crashsim: tests/bad_input/unknown_op.json: \$" -- \
    check tests/bad_input/unknown_op.json
bad_flag "run of a directory" "crashsim: scenarios/btrfs: \$: expected a readable file, got a directory" -- \
    run scenarios/btrfs --trace-text "$TMP/flag/trace.txt"
mkdir -p "$TMP/no-scenarios"
bad_flag "check of a directory without scenarios names it" \
    "crashsim: $TMP/no-scenarios: expected a directory with scenario files (*.json), got none" -- check "$TMP/no-scenarios"
bad_flag "check of a number too large for a double" \
    "crashsim: tests/bad_input/number_past_double.json: \$.device.blocks: expected a number a double can hold, got 1e400" -- \
    check tests/bad_input/number_past_double.json
bad_flag "fuzz --shard 3/2" "crashsim: --shard" -- fuzz "$SCEN" --shard 3/2 --out "$TMP/flag"
bad_flag "fuzz --shard x" "crashsim: --shard" -- fuzz "$SCEN" --shard x --out "$TMP/flag"
bad_flag "fuzz --shard 0/0" "crashsim: --shard" -- fuzz "$SCEN" --shard 0/0 --out "$TMP/flag"
bad_flag "fuzz --jobs 0" "crashsim: --jobs" -- fuzz "$SCEN" --jobs 0 --out "$TMP/flag"
bad_flag "fuzz --split-depth without dfs" "crashsim: --split-depth: expected only with --strategy dfs" -- fuzz "$SCEN" --split-depth 3 --out "$TMP/flag"
bad_flag "fuzz --split-depth 0" "crashsim: --split-depth" -- fuzz "$SCEN" --strategy dfs --split-depth 0 --out "$TMP/flag"
bad_flag "fuzz --walks 0" "crashsim: --walks" -- fuzz "$SCEN" --strategy dfs --estimate --walks 0 --out "$TMP/flag"
bad_flag "fuzz --walks 100001" "crashsim: --walks" -- fuzz "$SCEN" --strategy dfs --estimate --walks 100001 --out "$TMP/flag"
bad_flag "fuzz --probes 0" "crashsim: --probes" -- fuzz "$SCEN" --strategy dfs --estimate --probes 0 --out "$TMP/flag"
bad_flag "fuzz --probes 1001" "crashsim: --probes" -- fuzz "$SCEN" --strategy dfs --estimate --probes 1001 --out "$TMP/flag"
bad_flag "fuzz --probes without --estimate" "crashsim: --probes: expected only with --strategy dfs and --estimate" -- \
    fuzz "$SCEN" --strategy dfs --probes 2 --out "$TMP/flag"
bad_flag "fuzz --probes with --walks" "crashsim: --probes: expected only with --strategy dfs and --estimate" -- \
    fuzz "$SCEN" --strategy dfs --estimate --walks 4 --probes 2 --out "$TMP/flag"
bad_flag "bench --bound-max 4" "crashsim: --bound-max" -- bench --search --bound-max 4
bad_flag "bench --cap 0" "crashsim: --cap" -- bench --search --cap 0
bad_flag "bench --scenario /nonexistent.json" "crashsim: /nonexistent.json" -- bench --search --scenario /nonexistent.json
# The search table's rows: their shape only, never their times.
run_cs "$TMP/bench.out" "$TMP/bench.err" bench --search --bound-max 2 --cap 40
expect_rc "bench --search" 0 "$TMP/bench.out" "$TMP/bench.err"
expect_egrep "bench --search: the first counterexample as fuzz dfs:2 reaches it, estimate and search apart" \
    '^first counterexample btrfs/fast-fsync-vs-page-release +before-fix +dfs:2 +[0-9.]+ ms in all: estimate [0-9.]+ ms \(2 walks, [0-9]+ runs\), search [0-9.]+ ms \(49 schedules, found\)$' "$TMP/bench.out"
expect_egrep "bench --search: before-fix at dfs:1 stops at its violation" \
    '^search btrfs/fast-fsync-vs-page-release +before-fix +dfs:1 +49 schedules +[0-9]+ crash states +[0-9.]+ s  violation at schedule 48$' "$TMP/bench.out"
expect_egrep "bench --search: fix-1 at dfs:1 is a complete proof" \
    '^search btrfs/fast-fsync-vs-page-release +fix-1 +dfs:1 +[0-9]+ schedules +[0-9]+ crash states +[0-9.]+ s  complete proof$' "$TMP/bench.out"
expect_egrep "bench --search: a capped row says so" \
    '^search btrfs/log-commit-batching +jiffy-sleep +dfs:2 +40 schedules +[0-9]+ crash states +[0-9.]+ s  capped at 40 schedules: not complete$' "$TMP/bench.out"
if [ "$(grep -c '^search ' "$TMP/bench.out")" -eq 7 ]; then
    ok "bench --search --bound-max 2: seven search rows (btrfs 2x2, xfs 1 and 2, log-commit 2)"
else
    not_ok "bench --search --bound-max 2: seven search rows" "$(cat "$TMP/bench.out")"
fi
# What pruning visited states could save (bench --visited):
# a measurement, not a search mode. Its unsound key (positions only) loses
# before-fix's violation; per-task histories cut nothing on this race; the
# key of what each task read (every btrfs resource hashed) cuts runs and keeps
# before-fix's violations and every distinct crash state.
bad_flag "bench --visited --search" "crashsim: --search excludes --visited" -- bench --visited --search
bad_flag "bench --visited --cap" "crashsim: --cap excludes --visited" -- bench --visited --cap 40
run_cs "$TMP/visited.out" "$TMP/visited.err" bench --visited --bound-max 1
expect_rc "bench --visited" 0 "$TMP/visited.out" "$TMP/visited.err"
visited_row() { grep -E "^visited btrfs/fast-fsync-vs-page-release +$1 +dfs:1 key $2 " "$TMP/visited.out"; }
visited_n() { visited_row "$1" "$2" | sed -n "s/.* \([0-9]*\) $3.*/\1/p"; }
visited_distinct() { visited_row "$1" "$2" | sed -n "s/.* \([0-9]*\) distinct,.*/\1/p"; }
if [ "$(grep -c '^visited ' "$TMP/visited.out")" -eq 8 ] &&
    [ "$(visited_n before-fix 'none \(fuzz\)' violating)" -gt 0 ] &&
    [ "$(visited_n before-fix 'positions \(unsound\)' violating)" = 0 ] &&
    [ "$(visited_n fix-1 'positions \(unsound\)' 'schedules')" -lt "$(visited_n fix-1 'none \(fuzz\)' 'schedules')" ] &&
    [ "$(visited_n fix-1 'task histories' 'schedules')" = "$(visited_n fix-1 'none \(fuzz\)' 'schedules')" ] &&
    [ "$(visited_n before-fix reads violating)" -gt 0 ] &&
    [ "$(visited_n fix-1 reads 'schedules')" -lt "$(visited_n fix-1 'none \(fuzz\)' 'schedules')" ] &&
    [ "$(visited_distinct fix-1 reads)" = "$(visited_distinct fix-1 'none \(fuzz\)')" ] &&
    [ "$(visited_distinct before-fix reads)" = "$(visited_distinct before-fix 'none \(fuzz\)')" ]; then
    ok "bench --visited: positions cut runs and lose before-fix's violation; histories cut none; reads cut and keep all"
else
    not_ok "bench --visited: positions cut runs and lose before-fix's violation; histories cut none; reads cut and keep all" \
        "$(cat "$TMP/visited.out")"
fi
# A dfs run names the yield points it reached that declare no footprint
# (the xfs freezer's, which change the freeze level every step reads); the
# btrfs race's all declare theirs.
run_cs "$TMP/undeclared.out" "$TMP/undeclared.err" fuzz scenarios/xfs/freeze-vs-log-worker.json \
    --variant cancel-first --strategy dfs:0 --out "$TMP/flag"
expect_rc "fuzz dfs:0 on the xfs freeze race" 0 "$TMP/undeclared.out" "$TMP/undeclared.err"
expect_egrep "fuzz dfs names the reached yield points that declare no footprint" \
    '^footprints: 6 of the 13 yield points reached declare none, .*: xfs\.freeze\.write, xfs\.freeze\.fs,' \
    "$TMP/undeclared.out"
run_cs "$TMP/declared.out" "$TMP/declared.err" fuzz "$SCEN" --variant fix-1 --strategy dfs:0 --out "$TMP/flag"
if [ "$RC" = 0 ] && ! grep -q '^footprints:' "$TMP/declared.out"; then
    ok "fuzz dfs prints no footprints line where every point reached declares one"
else
    not_ok "fuzz dfs prints no footprints line where every point reached declares one" "$(show "$TMP/declared.out")"
fi
bad_flag "fuzz --preemptions without dfs" "crashsim: --preemptions" -- fuzz "$SCEN" --preemptions 2 --out "$TMP/flag"
bad_flag "fuzz --preemptions 9" "crashsim: --preemptions" -- fuzz "$SCEN" --strategy dfs --preemptions 9 --out "$TMP/flag"
bad_flag "fuzz --io-reorders 9" "crashsim: --io-reorders" -- fuzz "$SCEN" --io-reorders 9 --out "$TMP/flag"
bad_flag "fuzz --daemon-wakeups 9" "crashsim: --daemon-wakeups" -- fuzz "$SCEN" --daemon-wakeups 9 --out "$TMP/flag"
bad_flag "fuzz --recovery-crashes 5" "crashsim: --recovery-crashes: expected an integer from 0 to 4, got \"5\"" -- fuzz "$SCEN" --recovery-crashes 5 --out "$TMP/flag"
bad_flag "fuzz --recovery-crashes -1" "crashsim: --recovery-crashes" -- fuzz "$SCEN" --recovery-crashes -1 --out "$TMP/flag"
bad_flag "scenario explore.recovery_crashes 5" \
    "crashsim: tests/bad_input/explore_recovery_crashes_too_large.json: \$.explore.recovery_crashes: expected an unsigned integer from 0 to 4, got 5" -- \
    check tests/bad_input/explore_recovery_crashes_too_large.json
# Every numeric option is range-checked: no sign, no wrap-around past 2^64.
bad_flag "fuzz --seed -1" "crashsim: --seed: expected an integer from 0 to 18446744073709551615, got \"-1\"" -- fuzz "$SCEN" --seed -1 --out "$TMP/flag"
bad_flag "fuzz --shrink-budget 0" "crashsim: --shrink-budget: expected an integer from 1 to 18446744073709551615, got \"0\"" -- fuzz "$SCEN" --shrink-budget 0 --out "$TMP/flag"
bad_flag "shrink --budget -1" "crashsim: --budget: expected an integer from 1 to 18446744073709551615, got \"-1\"" -- shrink "$TMP/flag/none.json" --budget -1
bad_flag "fuzz --seed 2^64" "crashsim: --seed: expected an integer from 0 to 18446744073709551615" -- fuzz "$SCEN" --seed 18446744073709551616 --out "$TMP/flag"
bad_flag "run --seed -1" "crashsim: --seed" -- run "$SCEN" --seed -1 --trace-text "$TMP/flag/trace.txt"
bad_flag "fuzz --schedules -1" "crashsim: --schedules: expected an integer from 1 to" -- fuzz "$SCEN" --schedules -1 --out "$TMP/flag"
bad_flag "fuzz --schedules past 2^64" "crashsim: --schedules" -- fuzz "$SCEN" --schedules 99999999999999999999999 --out "$TMP/flag"
bad_flag "fuzz --jobs 100000" "crashsim: --jobs: expected an integer from 1 to 256" -- fuzz "$SCEN" --jobs 100000 --out "$TMP/flag"
bad_flag "check --jobs 100000" "crashsim: --jobs" -- check "$SCEN" --jobs 100000 --junit "$TMP/flag/j.xml"
bad_flag "fuzz --io-reorders -1" "crashsim: --io-reorders" -- fuzz "$SCEN" --io-reorders -1 --out "$TMP/flag"
bad_flag "fuzz --preemptions +1" "crashsim: --preemptions" -- fuzz "$SCEN" --strategy dfs --preemptions +1 --out "$TMP/flag"
bad_flag "check --jobs 0" "crashsim: --jobs" -- check "$SCEN" --jobs 0 --junit "$TMP/flag/j.xml"
bad_flag "fuzz --verify-determinism 0" "crashsim: --verify-determinism: expected an integer from 1 to" -- \
    fuzz "$SCEN" --verify-determinism 0 --out "$TMP/flag"
bad_flag "check --verify-determinism -1" "crashsim: --verify-determinism" -- \
    check "$SCEN" --verify-determinism -1 --junit "$TMP/flag/j.xml"
bad_flag "check --junit in a missing directory" "crashsim: --junit" -- check "$SCEN" --junit /nonexistent/dir/j.xml
bad_flag "shrink of a missing repro" "crashsim: $TMP/flag/none.json: \$" -- shrink "$TMP/flag/none.json"
printf 'not json' >"$TMP/garbage-result.json"
bad_flag "merge of a corrupt result" "crashsim: $TMP/garbage-result.json: \$" -- merge "$TMP/garbage-result.json" --out "$TMP/flag/m.json"

# A run that fails on its input after it started (the scripted schedule cannot
# be followed) prints nothing on stdout: the header is held until the verb ends.
sed 's/{"run": "reclaim", "until": "btrfs.release.before_em_lock"}/{"run": "reclaim", "until": "btrfs.release.after_em_unlock", "count": 5}/' \
    "$SCEN" >"$TMP/unfollowable.json"
bad_flag "run of a schedule it cannot follow" "crashsim: $TMP/unfollowable.json: \$.schedule[3]: expected task reclaim" -- \
    run "$TMP/unfollowable.json" --trace-text "$TMP/flag/trace.txt"
bad_flag "check of a schedule it cannot follow" "crashsim: $TMP/unfollowable.json: \$.schedule[3]" -- \
    check "$TMP/unfollowable.json" --junit "$TMP/flag/j.xml"

# Corrupt and tampered repros, each alone in a directory that must stay so.
# bad_repro NAME FILE PREFIX: replay FILE (written into $TMP/repro/).
bad_repro() {
    run_cs "$TMP/repro.out" "$TMP/repro.err" replay "$TMP/repro/$2" --trace-text "$TMP/repro/trace.txt"
    # shrink reads a repro as replay does: a bad one is an input error.
    "$BIN" shrink "$TMP/repro/$2" --out "$TMP/repro/shrunk.json" >"$TMP/shrink-bad.out" 2>"$TMP/shrink-bad.err"
    shrink_rc=$?
    mv "$TMP/repro/$2" "$TMP/$2.saved"
    expect_input_error "$1" "$TMP/repro.out" "$TMP/repro.err" "$TMP/repro" "$3"
    RC=$shrink_rc
    expect_input_error "shrink: $1" "$TMP/shrink-bad.out" "$TMP/shrink-bad.err" "$TMP/repro" "$3"
}
mkdir "$TMP/repro"

printf 'this is { not json\n' >"$TMP/repro/garbage.json"
bad_repro "replay of a corrupt repro" garbage.json "crashsim: $TMP/repro/garbage.json: \$"

: >"$TMP/repro/empty.json"
bad_repro "replay of an empty repro" empty.json "crashsim: $TMP/repro/empty.json: \$"

bad_repro_missing() {
    run_cs "$TMP/repro.out" "$TMP/repro.err" replay "$TMP/repro/missing.json"
    expect_input_error "replay of a missing repro" "$TMP/repro.out" "$TMP/repro.err" "$TMP/repro" \
        "crashsim: $TMP/repro/missing.json: \$"
}
bad_repro_missing

# Replace the (multi-line) choices array of the good repro with [99].
awk '
    skipping && /^  \]/ { skipping = 0; print "  \"choices\": [99]" substr($0, 4); next }
    skipping { next }
    /^  "choices": \[$/ { skipping = 1; next }
    /^  "choices": \[.*\],?$/ { sub(/\[.*\]/, "[99]"); print; next }
    { print }
' "$GOOD_REPRO" >"$TMP/repro/tampered.json"
if grep -q '"choices": \[99\]' "$TMP/repro/tampered.json"; then
    ok "tampered repro prepared"
else
    not_ok "tampered repro prepared" "$(grep -n choices "$TMP/repro/tampered.json")"
fi
bad_repro "replay of a repro whose choices diverge" tampered.json "crashsim: $TMP/repro/tampered.json: \$.choices"

# The scenario embedded in a repro is checked like a scenario file.
sed 's/"scenario_path"/"scenario_path_x"/' "$GOOD_REPRO" >"$TMP/repro/nopath.json"
bad_repro "replay of a repro without scenario_path" nopath.json "crashsim: $TMP/repro/nopath.json: \$"

sed 's/"variant": "before-fix"/"variant": "nosuch"/' "$GOOD_REPRO" >"$TMP/repro/variant.json"
bad_repro "replay of a repro naming an unknown variant" variant.json "crashsim: $TMP/repro/variant.json: \$.variant"

sed 's/"keep": "[01]*"/"keep": "1x"/' "$GOOD_REPRO" >"$TMP/repro/keep.json"
bad_repro "replay of a repro with a malformed crash.keep" keep.json "crashsim: $TMP/repro/keep.json: \$.crash.keep"

sed 's/"keep": "[01]*"/"keep": "1111111"/' "$GOOD_REPRO" >"$TMP/repro/keepn.json"
bad_repro "replay of a repro keeping more writes than are unflushed" keepn.json \
    "crashsim: $TMP/repro/keepn.json: \$.crash.keep: expected one flag per write unflushed at crash step "

# A crash step the replayed run never reaches is a diverged repro too; it
# must not be reported as "no violation" with exit 0.
sed 's/"step": [0-9]*/"step": 99999/' "$GOOD_REPRO" >"$TMP/repro/step.json"
# The message blames the crash step, not the choices.
bad_repro "replay of a repro whose crash step is never reached" step.json \
    "crashsim: $TMP/repro/step.json: \$.crash.step: expected a step from 1 to "
bad_flag "shrink of a repro whose crash step is never reached" "crashsim: $TMP/step.json.saved: \$.crash.step: expected a step from 1 to " -- \
    shrink "$TMP/step.json.saved" --out "$TMP/flag/shrunk.json"

awk '
    skipping && /^  \]/ { skipping = 0; print "  \"choices\": []" substr($0, 4); next }
    skipping { next }
    /^  "choices": \[$/ { skipping = 1; next }
    { print }
' "$GOOD_REPRO" >"$TMP/repro/nochoices.json"
bad_repro "replay of a repro with an empty choices array" nochoices.json "crashsim: $TMP/repro/nochoices.json: \$.choices"

# A repro whose replay gives another trace hash does not reproduce its run: exit 2.
sed 's/"trace_hash": "[0-9a-f]*"/"trace_hash": "0000000000000001"/' "$GOOD_REPRO" >"$TMP/repro/hash.json"
bad_repro "replay of a repro whose trace hash differs" hash.json \
    "crashsim: $TMP/repro/hash.json: \$.trace_hash: expected "
sed 's/"checker": "fsync_durability"/"checker": "no_stale_data"/' "$GOOD_REPRO" >"$TMP/repro/checker.json"
bad_repro "replay of a repro naming another violation" checker.json \
    "crashsim: $TMP/repro/checker.json: \$.violation.checker: expected fsync_durability"

# A bad scenario embedded in a repro is blamed on the repro and $.scenario.
# (The first escaped "fsync_durability", on the scenario's one line, is in its checkers.)
sed 's/\\"fsync_durability\\",/\\"fsync_durabilityX\\",/' \
    "$GOOD_REPRO" >"$TMP/repro/scenario.json"
bad_repro "replay of a repro with a bad embedded scenario" scenario.json "crashsim: $TMP/repro/scenario.json: \$.scenario"

# An unwritable --trace-text is refused before anything runs.
bad_flag "run --trace-text in a missing directory" "crashsim: --trace-text" -- \
    run "$SCEN" --trace-text /nonexistent/dir/trace.txt
bad_flag "replay --trace-text in a missing directory" "crashsim: --trace-text" -- \
    replay "$GOOD_REPRO" --trace-text /nonexistent/dir/trace.txt

# ---------------------------------------------------------------- shards and merge
mkdir "$TMP/shards"
for k in 0 1 2; do
    run_cs "$TMP/shard.out" "$TMP/shard.err" fuzz "$SCEN" --variant before-fix --schedules 3000 \
        --shard "$k/3" --no-shrink --quiet --out "$TMP/shards"
    if [ "$RC" -le 1 ] && ls "$TMP"/shards/result-*shard${k}of3.json >/dev/null 2>&1; then
        ok "fuzz --shard $k/3 writes its result"
    else
        not_ok "fuzz --shard $k/3 writes its result" "exit $RC" "$(show "$TMP/shard.err")"
    fi
done
# Each shard writes its own repro: names carry the schedule, so shards
# sharing --out never overwrite each other.
mkdir "$TMP/shard-repros"
shard_found=0
for k in 0 1; do
    "$BIN" fuzz "$SCEN" --variant before-fix --strategy pct:3 --schedules 2000 --shard "$k/2" --no-shrink --quiet \
        --out "$TMP/shard-repros" >/dev/null 2>&1
    [ $? -eq 1 ] && shard_found=$((shard_found + 1))
done
shard_repros=$(ls -A "$TMP/shard-repros" | grep -c '^repro-.*-schedule[0-9]*\.json$')
if [ "$shard_found" -eq 2 ] && [ "$shard_repros" -eq 2 ]; then
    ok "two shards sharing --out that both find a violation leave two repro files"
else
    not_ok "two shards sharing --out that both find a violation leave two repro files" \
        "$shard_found found; $(files_in "$TMP/shard-repros")"
fi
# A dfs shard counts schedules within a unit: its repro names the unit too, and
# its output says what --schedules caps.
mkdir "$TMP/dfs-shard-repros"
run_cs "$TMP/dfs-shard.out" "$TMP/dfs-shard.err" fuzz "$SCEN" --variant before-fix --strategy dfs --preemptions 1 \
    --shard 1/2 --no-shrink --quiet --out "$TMP/dfs-shard-repros"
expect_rc "fuzz --strategy dfs --shard 1/2 on before-fix" 1 "$TMP/dfs-shard.out" "$TMP/dfs-shard.err"
if ls -A "$TMP/dfs-shard-repros" | grep -q '^repro-.*-dfs_1-seed0-unit[0-9]*-schedule[0-9]*\.json$'; then
    ok "a dfs shard's repro is named by its unit and its index within it"
else
    not_ok "a dfs shard's repro is named by its unit and its index within it" "$(files_in "$TMP/dfs-shard-repros")"
fi
expect_grep "a dfs shard says where it found the violation" "of dfs unit" "$TMP/dfs-shard.out"
expect_grep "a split dfs says --schedules caps the search in all" "caps the search in all" "$TMP/dfs-shard.out"
run_cs "$TMP/merge.out" "$TMP/merge.err" merge "$TMP"/shards/result-*.json --out "$TMP/merged.json"
expect_rc "merge of three shards" 1 "$TMP/merge.out" "$TMP/merge.err"
run_cs "$TMP/all.out" "$TMP/all.err" fuzz "$SCEN" --variant before-fix --schedules 3000 --all \
    --no-shrink --quiet --jobs 2 --result "$TMP/all.json" --out "$TMP/shards"
expect_rc "fuzz --all --jobs 2" 1 "$TMP/all.out" "$TMP/all.err"
if [ "$(grep -v '"shard"\|"index": [0-9]*,$\|"count"' "$TMP/merged.json" | grep -v '^  },$')" = \
     "$(grep -v '"shard"\|"index": [0-9]*,$\|"count"' "$TMP/all.json" | grep -v '^  },$')" ]; then
    ok "merged shards equal the whole campaign run with 2 jobs"
else
    not_ok "merged shards equal the whole campaign run with 2 jobs" "$(diff "$TMP/merged.json" "$TMP/all.json" | head -n 10)"
fi
# A campaign's budgets are totals: check --json and fuzz --result (times
# aside) are the same for --jobs 1, 2 and 3, where dfs stops at its cap and
# where it completes, and the merged dfs shards are the unsharded result.
sed -e 's/"strategies": \["random", "pct:3", "dfs:2"\], "schedules": 10000, "dfs_schedules": 500000, "states": "locals"/"strategies": ["random", "pct:3", "dfs:1"], "schedules": 300, "dfs_schedules": 12000/' \
    scenarios/btrfs/kthread-commit-in-fast-fsync.json >"$TMP/capped.json"
mkdir "$TMP/budgets"
for j in 1 2 3; do
    "$BIN" check "$TMP/capped.json" --jobs "$j" --json "$TMP/budgets/check-j$j.json" >/dev/null 2>&1
    "$BIN" fuzz "$SCEN" --variant fix-1 --strategy dfs:1 --schedules 5000 --jobs "$j" --quiet \
        --result "$TMP/budgets/capped-j$j.json" --out "$TMP/budgets" >/dev/null 2>&1
    "$BIN" fuzz "$SCEN" --variant fix-1 --strategy dfs:1 --jobs "$j" --quiet \
        --result "$TMP/budgets/whole-j$j.json" --out "$TMP/budgets" >/dev/null 2>&1
done
for k in 0 1; do
    "$BIN" fuzz "$SCEN" --variant fix-1 --strategy dfs:1 --shard "$k/2" --quiet \
        --result "$TMP/budgets/shard$k.json" --out "$TMP/budgets" >/dev/null 2>&1
done
"$BIN" merge "$TMP/budgets/shard0.json" "$TMP/budgets/shard1.json" --out "$TMP/budgets/merged.json" >/dev/null 2>&1
untimed() { grep -v 'seconds' "$1"; }
for pair in check-j1:check-j2 check-j1:check-j3 capped-j1:capped-j2 capped-j1:capped-j3 whole-j1:whole-j2 \
    whole-j1:whole-j3 whole-j1:merged; do
    a="$TMP/budgets/${pair%%:*}.json"
    b="$TMP/budgets/${pair##*:}.json"
    if [ -s "$a" ] && [ "$(untimed "$a")" = "$(untimed "$b")" ]; then
        ok "${pair##*:} is ${pair%%:*}, times aside"
    else
        not_ok "${pair##*:} is ${pair%%:*}, times aside" "$(diff "$a" "$b" | head -n 10)"
    fi
done
expect_grep "check with jobs says where dfs stopped at its cap" "did not complete within 12000 schedules" \
    "$TMP/budgets/check-j2.json"
expect_grep "merge states the bounds the shards explored with" \
    "explored with at most 1 I/O reordering and 0 daemon wake-ups per schedule" "$TMP/merge.out"
mkdir "$TMP/other-bounds"
run_cs "$TMP/ob.out" "$TMP/ob.err" fuzz "$SCEN" --variant before-fix --schedules 3000 \
    --shard 1/3 --io-reorders 0 --no-shrink --quiet --out "$TMP/other-bounds"
run_cs "$TMP/obm.out" "$TMP/obm.err" merge "$TMP"/shards/result-*shard0of3.json \
    "$TMP"/other-bounds/result-*shard1of3.json "$TMP"/shards/result-*shard2of3.json
expect_rc "merge of shards explored with other bounds" 2 "$TMP/obm.out" "$TMP/obm.err"
expect_grep "merge names the differing bounds" \
    "\$.explore: expected \"at most 1 I/O reordering and 0 daemon wake-ups per schedule; crash during recovery: 1 nested power cut per crash state\" like" "$TMP/obm.err"
sed 's/"io_reorders": 1/"io_reorders": 9/' "$TMP"/shards/result-*shard0of3.json >"$TMP/bad-bounds.json"
bad_flag "merge of a result with an out-of-range bound" \
    "crashsim: $TMP/bad-bounds.json: \$.explore.io_reorders: expected an unsigned integer from 0 to 8, got 9" \
    -- merge "$TMP/bad-bounds.json" --out "$TMP/flag/bb.json"
cp "$TMP"/shards/result-*shard0of3.json "$TMP/dup.json"
run_cs "$TMP/dup.out" "$TMP/dup.err" merge "$TMP"/shards/result-*shard0of3.json "$TMP/dup.json"
expect_rc "merge of a repeated shard" 2 "$TMP/dup.out" "$TMP/dup.err"

# ---------------------------------------------------------------- interruption
"$BIN" fuzz "$SCEN" --variant fix-1 --schedules 100000000 --result "$TMP/interrupted.json" \
    --out "$TMP/shards" >"$TMP/int.out" 2>"$TMP/int.err" &
pid=$!
# wait_for_handler PID SECONDS: signal only once the handler is installed
# (SIGTERM, 15, is bit 14 of SigCgt), so the default action cannot kill the
# process first; then SECONDS more (into its schedules).
wait_for_handler() {
    for _ in $(seq 1 1000); do
        cgt=$(sed -n 's/^SigCgt:[[:space:]]*//p' "/proc/$1/status" 2>/dev/null)
        [ -n "$cgt" ] && [ $(((0x$cgt >> 14) & 1)) -eq 1 ] && break
        sleep 0.01
    done
    sleep "$2"
}
wait_for_handler "$pid" 0.5
kill -TERM "$pid"
wait "$pid"
RC=$?
expect_rc "a fuzz run stopped by SIGTERM" 130 "$TMP/int.out" "$TMP/int.err"
expect_grep "an interrupted fuzz run prints what it explored" "interrupted: explored" "$TMP/int.out"
expect_grep "an interrupted fuzz run writes its whole result" '"interrupted": true' "$TMP/interrupted.json"
if ls "$TMP"/*.tmp* "$TMP"/shards/*.tmp* >/dev/null 2>&1; then
    not_ok "an interrupted run leaves no temporary file"
else
    ok "an interrupted run leaves no temporary file"
fi

# ---------------------------------------------------------------- interruption inside long runs
# btrfs/log-commit-jiffy-sleep: a random schedule takes about 0.7 s and a
# dfs:2 one 40 s. A stop request ends the run between steps, and the
# campaign counts only whole schedules.
mkdir -p "$TMP/long-int"
for strategy in random dfs:2; do
    "$BIN" fuzz scenarios/btrfs/log-commit-jiffy-sleep.json --strategy "$strategy" --schedules 100 \
        --result "$TMP/long-int.json" --out "$TMP/long-int" >"$TMP/long-int.out" 2>"$TMP/long-int.err" &
    pid=$!
    wait_for_handler "$pid" 1
    kill -TERM "$pid"
    wait "$pid"
    RC=$?
    expect_rc "a $strategy run inside a long schedule stopped by SIGTERM" 130 "$TMP/long-int.out" "$TMP/long-int.err"
    run=$(jq '.schedules_run' "$TMP/long-int.json" 2>/dev/null || echo missing)
    if [ "$run" != missing ] && [ "$run" -lt 100 ] && jq -e '.interrupted == true' "$TMP/long-int.json" >/dev/null; then
        ok "a $strategy campaign stopped inside its schedules counts only the whole ones ($run of 100)"
    else
        not_ok "a $strategy campaign stopped inside its schedules counts only the whole ones" \
            "schedules_run: $run; $(show "$TMP/long-int.out")"
    fi
    # dfs:2 stops inside its first schedule: the states the estimate's
    # timing run and the cut run judged are of no schedule counted.
    if [ "$strategy" = dfs:2 ]; then
        if [ "$run" = 0 ] && ! grep -q '^distinct crash states' "$TMP/long-int.out"; then
            ok "a dfs campaign stopped in its first schedule reports no distinct crash states"
        else
            not_ok "a dfs campaign stopped in its first schedule reports no distinct crash states" \
                "schedules_run: $run; $(show "$TMP/long-int.out")"
        fi
    fi
done

# ---------------------------------------------------------------- liveness and the step bound
# The liveness bound at 3 steps: the fsync takes more, so fix-1 fails liveness,
# a violation without a crash record that fuzz must report, shrink and write.
sed 's/"explore": {"io_reorders": 1, "daemon_wakeups": 0}/"explore": {"io_reorders": 1, "daemon_wakeups": 0, "progress_steps": 3}/' \
    "$SCEN" >"$TMP/impatient.json"
for strategy in dfs random; do
    rm -rf "$TMP/live" && mkdir "$TMP/live"
    run_cs "$TMP/live.out" "$TMP/live.err" fuzz "$TMP/impatient.json" --variant fix-1 --strategy "$strategy" \
        --schedules 50 --out "$TMP/live"
    expect_rc "fuzz --strategy $strategy finding a liveness violation" 1 "$TMP/live.out" "$TMP/live.err"
    expect_grep "fuzz --strategy $strategy names the liveness bound" \
        "VIOLATION liveness: no progress: no operation completed in the last 3 steps (explore.progress_steps bound)" \
        "$TMP/live.out"
    live_repro=$(ls "$TMP"/live/repro-*.json 2>/dev/null | head -n 1)
    if [ -n "$live_repro" ] && ! grep -q '"crash"' "$live_repro"; then
        ok "fuzz --strategy $strategy writes a liveness repro without a crash record"
    else
        not_ok "fuzz --strategy $strategy writes a liveness repro without a crash record" "$(files_in "$TMP/live")"
    fi
    run_cs "$TMP/live-replay.out" "$TMP/live-replay.err" replay "$live_repro"
    expect_rc "replay of the $strategy liveness repro" 1 "$TMP/live-replay.out" "$TMP/live-replay.err"
    expect_grep "replay of the $strategy liveness repro matches" "(matches the repro)" "$TMP/live-replay.out"
    run_cs "$TMP/live-shrink.out" "$TMP/live-shrink.err" shrink "$live_repro" --out "$TMP/live/shrunk.json"
    expect_rc "shrink of the $strategy liveness repro" 1 "$TMP/live-shrink.out" "$TMP/live-shrink.err"
    expect_grep "shrink of the $strategy liveness repro keeps it" "VIOLATION liveness" "$TMP/live-shrink.out"
done
# The step bound: a run cut there is not a violation, and says it is a bound.
sed 's/"explore": {"io_reorders": 1, "daemon_wakeups": 0}/"explore": {"io_reorders": 1, "daemon_wakeups": 0, "steps": 5}/' \
    "$SCEN" >"$TMP/short.json"
run_cs "$TMP/short.out" "$TMP/short.err" run "$TMP/short.json" --variant fix-1
expect_rc "run cut by explore.steps" 0 "$TMP/short.out" "$TMP/short.err"
expect_grep "run cut by explore.steps says it is a bound" \
    "not explored past step 5: the run reached the step bound (explore.steps)" "$TMP/short.out"
rm -rf "$TMP/flag" && mkdir "$TMP/flag"
sed 's/"explore": {"io_reorders": 1, "daemon_wakeups": 0}/"explore": {"io_reorders": 1, "daemon_wakeups": 0, "steps": 0}/' \
    "$SCEN" >"$TMP/zero-steps.json"
bad_flag "a scenario with explore.steps 0" \
    "crashsim: $TMP/zero-steps.json: \$.explore.steps: expected an unsigned integer from 1 to 1000000000, got 0" -- \
    run "$TMP/zero-steps.json" --trace-text "$TMP/flag/trace.txt"

# ---------------------------------------------------------------- the total shrink budget
rm -rf "$TMP/budget" && mkdir "$TMP/budget"
run_cs "$TMP/budget.out" "$TMP/budget.err" fuzz "$SCEN" --variant before-fix --strategy pct:3 --schedules 10000 \
    --quiet --shrink-budget 5 --out "$TMP/budget"
expect_rc "fuzz with a shrink budget of 5 schedules" 1 "$TMP/budget.out" "$TMP/budget.err"
expect_grep "fuzz says where shrinking stopped on its budget" \
    "shrink: budget: shrinking stopped on its total budget of 5 schedules (--shrink-budget); shrunk as far as the budget allowed, not minimal" \
    "$TMP/budget.out"
expect_grep "fuzz never presents a budget-stopped repro as minimal" \
    "(shrunk as far as the budget allowed: not minimal)" "$TMP/budget.out"
budget_repro=$(ls "$TMP"/budget/repro-*.json 2>/dev/null | head -n 1)
run_cs "$TMP/budget-replay.out" "$TMP/budget-replay.err" replay "$budget_repro"
expect_rc "replay of a budget-stopped repro" 1 "$TMP/budget-replay.out" "$TMP/budget-replay.err"

# ---------------------------------------------------------------- interrupted shrink and check
rm -rf "$TMP/stop" && mkdir "$TMP/stop"
# The btrfs race shrinks in a fraction of a second since removals are tried
# tasks first at the story's preemptions; the ext4 violation below
# shrinks for more than a minute without a budget: a signal 1 s in lands
# while it shrinks.
SLOW_SHRINK=scenarios/jbd2/relogged-buffer-checkpoint.json
found_start=$(date +%s%N)
"$BIN" fuzz "$SLOW_SHRINK" --variant before-2-3 --seed 0 --no-shrink --quiet \
    --out "$TMP/stop" >/dev/null 2>&1
# How long this binary on this machine takes to find the violation (a
# sanitized build takes ten times longer): the fuzz below is signalled at
# twice that and a second more, while it shrinks.
found_ms=$((($(date +%s%N) - found_start) / 1000000))
raw_repro=$(ls "$TMP"/stop/repro-*.json | head -n 1)
"$BIN" shrink "$raw_repro" --budget 1000000000 --out "$TMP/stop/shrunk.json" >"$TMP/stop.out" 2>"$TMP/stop.err" &
pid=$!
wait_for_handler "$pid" 1
kill -TERM "$pid"
wait "$pid"
RC=$?
expect_rc "a shrink stopped by SIGTERM" 130 "$TMP/stop.out" "$TMP/stop.err"
expect_grep "an interrupted shrink says so" "interrupted: the repro written to $TMP/stop/shrunk.json is as far as shrinking got" "$TMP/stop.out"
expect_grep "an interrupted shrink marks its repro" "interrupted: shrinking stopped before it finished" "$TMP/stop/shrunk.json"
if grep -q "no schedule with at most" "$TMP/stop.out"; then
    not_ok "an interrupted shrink does not claim that no smaller schedule exists" "$(show "$TMP/stop.out")"
else
    ok "an interrupted shrink does not claim that no smaller schedule exists"
fi
run_cs "$TMP/stop-replay.out" "$TMP/stop-replay.err" replay "$TMP/stop/shrunk.json"
expect_rc "replay of an interrupted shrink's repro" 1 "$TMP/stop-replay.out" "$TMP/stop-replay.err"

# fuzz interrupted while shrinking: the repro is written as far as it got, exit 130.
# The fuzz finds its ext4 violation at schedule 10 (0.5 s idle, found_ms
# above on this machine) and shrinking it without a budget takes more than a
# minute: a signal at twice found_ms and a second more lands while it shrinks.
rm -rf "$TMP/stop2" && mkdir "$TMP/stop2"
"$BIN" fuzz "$SLOW_SHRINK" --variant before-2-3 --seed 0 --quiet --out "$TMP/stop2" \
    --shrink-budget 1000000000 \
    >"$TMP/stop2.out" 2>"$TMP/stop2.err" &
pid=$!
wait_for_handler "$pid" $((2 * found_ms / 1000 + 1))
kill -TERM "$pid"
wait "$pid"
RC=$?
expect_rc "a fuzz stopped by SIGTERM while shrinking" 130 "$TMP/stop2.out" "$TMP/stop2.err"
expect_grep "a fuzz stopped while shrinking says the repro is not fully shrunk" \
    "(shrinking interrupted: not fully shrunk)" "$TMP/stop2.out"
stop2_repro=$(ls "$TMP"/stop2/repro-*.json 2>/dev/null | head -n 1)
if [ -n "$stop2_repro" ] && grep -q "interrupted: shrinking stopped before it finished" "$stop2_repro"; then
    ok "a fuzz stopped while shrinking marks its repro"
else
    not_ok "a fuzz stopped while shrinking marks its repro" "$(files_in "$TMP/stop2")"
fi

# scenarios/xfs loads in milliseconds and checks for about 25 s: the signal 1 s in
# lands while variants run even on a loaded machine (all of scenarios/ took
# longer than that to load there, the perf sweeps expanding their workloads).
"$BIN" check scenarios/xfs --junit "$TMP/stop/check.xml" --json "$TMP/stop/check.json" \
    >"$TMP/check-stop.out" 2>"$TMP/check-stop.err" &
pid=$!
wait_for_handler "$pid" 1
kill -TERM "$pid"
wait "$pid"
RC=$?
expect_rc "a check stopped by SIGTERM" 130 "$TMP/check-stop.out" "$TMP/check-stop.err"
expect_grep "an interrupted check says so on the terminal" "check: interrupted: " "$TMP/check-stop.out"
expect_grep "an interrupted check marks unrun variants skipped in JUnit" "<skipped message=\"not run: the check was interrupted" "$TMP/stop/check.xml"
expect_grep "an interrupted check's JUnit names itself interrupted" "crashsim check (interrupted)" "$TMP/stop/check.xml"
expect_grep "an interrupted check's JSON says so" '"interrupted": true' "$TMP/stop/check.json"
expect_grep "an interrupted check's JSON marks unrun variants" '"skipped": true' "$TMP/stop/check.json"

# --verify-determinism: sampled schedules run twice more with a trace.
run_cs "$TMP/verify.out" "$TMP/verify.err" fuzz "$SCEN" --variant fix-3 --schedules 200 --verify-determinism 10
expect_rc "fuzz --verify-determinism on a deterministic model" 0 "$TMP/verify.out" "$TMP/verify.err"
expect_grep "fuzz --verify-determinism says what it ran again" \
    "determinism: 20 schedule(s) (1 schedule in 10) run twice more with a trace: byte-identical traces, the same steps, choices, crash states and verdict as the campaign's run" \
    "$TMP/verify.out"
run_cs "$TMP/verify-dfs.out" "$TMP/verify-dfs.err" fuzz "$SCEN" --variant fix-3 --strategy dfs --preemptions 1 \
    --verify-determinism 100
expect_rc "fuzz --strategy dfs --verify-determinism" 0 "$TMP/verify-dfs.out" "$TMP/verify-dfs.err"
expect_grep "dfs --verify-determinism names what it compares" \
    "(1 schedule in 100, runs the search abandoned left out) run twice more with a trace: byte-identical traces, the same steps and choices as the search's run" \
    "$TMP/verify-dfs.out"
run_cs "$TMP/verify-split.out" "$TMP/verify-split.err" fuzz "$SCEN" --variant fix-3 --strategy dfs --preemptions 1 \
    --jobs 2 --verify-determinism 100
expect_rc "fuzz --strategy dfs --jobs 2 --verify-determinism" 0 "$TMP/verify-split.out" "$TMP/verify-split.err"
expect_grep "a split dfs says its determinism sample is per unit" \
    "(1 schedule in 100 of each unit, its first included, runs the search abandoned left out)" "$TMP/verify-split.out"
if campaigns "check --verify-determinism 256 of the btrfs race"; then
    run_cs "$TMP/verify-check.out" "$TMP/verify-check.err" check "$SCEN" --verify-determinism 256
    expect_rc "check --verify-determinism" 0 "$TMP/verify-check.out" "$TMP/verify-check.err"
    expect_grep "check --verify-determinism sums what it ran again" "--jobs splits) run twice more with a trace: each ran the same" \
        "$TMP/verify-check.out"
fi

# ---------------------------------------------------------------- perf
if campaigns "perf of the bundled perf scenarios and a sweep"; then
    run_cs "$TMP/perf.out" "$TMP/perf.err" perf scenarios/btrfs/log-commit-jiffy-sleep.json --csv "$TMP/perf.csv"
    expect_rc "perf of the jiffy-sleep scenario" 0 "$TMP/perf.out" "$TMP/perf.err"
    expect_grep "perf prints the ratio and its verdict" "ratio no-sleep / jiffy-sleep (throughput):" "$TMP/perf.out"
    expect_grep "perf --csv writes the rows" "jiffy-sleep," "$TMP/perf.csv"
    run_cs "$TMP/perf-fs-mark.out" "$TMP/perf-fs-mark.err" perf scenarios/btrfs/fs-mark-jiffy-sleep.json --csv "$TMP/perf-fs-mark.csv"
    expect_rc "perf of the fs_mark scenario" 0 "$TMP/perf-fs-mark.out" "$TMP/perf-fs-mark.err"
    expect_grep "perf of an fs_mark workload prints files/s" "files/s" "$TMP/perf-fs-mark.out"
    expect_grep "perf judges the fs_mark ratio on files/s" "ratio no-sleep / jiffy-sleep (files_per_s):" "$TMP/perf-fs-mark.out"
    expect_grep "perf --csv has a files/s column for fs_mark" "virtual_s,files_s," "$TMP/perf-fs-mark.csv"
    # Machine profiles and the create_unlink workload.
    run_cs "$TMP/perf-cc.out" "$TMP/perf-cc.err" perf scenarios/xfs/concurrent-create.json --csv "$TMP/perf-cc.csv"
    expect_rc "perf of xfs/concurrent-create" 0 "$TMP/perf-cc.out" "$TMP/perf-cc.err"
    expect_grep "perf judges A's counter across variants" "ratio A-removed / A-counter (files_per_s):" "$TMP/perf-cc.out"
    expect_grep "perf judges unlinks/s" "ratio A-removed / A-counter (unlinks_per_s):" "$TMP/perf-cc.out"
    expect_grep "perf judges a ratio across machine profiles" "ratio A-counter / B-counter (files_per_s):" "$TMP/perf-cc.out"
    expect_grep "perf --csv has files/s and unlinks/s for create_unlink" "virtual_s,files_s,unlinks_s," "$TMP/perf-cc.csv"
    run_cs "$TMP/vary-cc.out" "$TMP/vary-cc.err" perf scenarios/xfs/concurrent-create.json --vary A.cpus=8,16
    expect_rc "perf --vary of a machine profile's field" 0 "$TMP/vary-cc.out" "$TMP/vary-cc.err"
    expect_grep "perf --vary names the profile's field" "--vary A.cpus (\$.machines.A.cpus)" "$TMP/vary-cc.out"
    run_cs "$TMP/list-cc.out" "$TMP/list-cc.err" list scenarios/xfs/concurrent-create.json
    expect_rc "list with a scenario" 0 "$TMP/list-cc.out" "$TMP/list-cc.err"
    expect_grep "list prints the scenario's machine profiles" "  B: 16 CPUs, 2 socket(s) of 8 cores; line hit 20 ns, miss 400 ns, remote miss 800 ns" "$TMP/list-cc.out"
    bad_flag "perf of a scenario without a workload" "crashsim: $SCEN: \$.workload" -- perf "$SCEN" --csv "$TMP/flag/p.csv"
    bad_flag "perf --csv in a missing directory" "crashsim: --csv" -- perf scenarios/btrfs/log-commit-jiffy-sleep.json --csv /nonexistent/dir/p.csv
    cat >"$TMP/sweep.json" <<'SWEEP'
    {"name": "cli/sweep", "model": "btrfs", "device": {"block_size": 4096, "blocks": 16384, "profile": "vm-nvme"},
     "workload": {"fio": {"jobs": 1, "rw": "write", "bs": 65536, "size": 1048576, "fsync": 1}},
     "sweep": {"parameter": "jobs", "points": [{"jobs": 1}, {"jobs": 2}, {"jobs": 4, "size": 524288}]},
     "checkers": ["fsync_durability"],
     "perf": {"metric": "throughput", "ratios": [{"numerator": "b", "denominator": "a", "at": 4, "min": 0.5, "max": 2}]},
     "variants": [{"name": "a", "expect": "measure"}, {"name": "b", "config": {"log_commit_sleep": "jiffy"}, "expect": "measure"}]}
SWEEP
    run_cs "$TMP/sweep.out" "$TMP/sweep.err" perf "$TMP/sweep.json" --csv "$TMP/sweep.csv"
    expect_rc "perf of a sweep" 0 "$TMP/sweep.out" "$TMP/sweep.err"
    expect_grep "perf of a sweep leads each row with the swept value" "       4 b     " "$TMP/sweep.out"
    expect_grep "perf of a sweep judges a ratio at its point" "ratio b / a at jobs=4 (throughput)" "$TMP/sweep.out"
    expect_grep "perf --csv of a sweep has the parameter's column" "jobs,variant,mib_s" "$TMP/sweep.csv"
    if [ "$(grep -c '^[124],' "$TMP/sweep.csv")" = 6 ]; then ok "perf --csv of a sweep has a row per point and variant"; else not_ok "perf --csv of a sweep has a row per point and variant"; show "$TMP/sweep.csv"; fi
    rm -rf "$TMP/flag" "$TMP/nogp" && mkdir "$TMP/flag" "$TMP/nogp"
    env PATH="$TMP/nogp" "$BIN" perf "$TMP/sweep.json" --plot "$TMP/flag/p.svg" >"$TMP/flag.out" 2>"$TMP/flag.err"
    RC=$?
    expect_input_error "perf --plot without gnuplot says how to install it" "$TMP/flag.out" "$TMP/flag.err" "$TMP/flag" \
        "crashsim: --plot: expected gnuplot on PATH (Debian: apt-get install gnuplot-nox)"
    if command -v gnuplot >/dev/null 2>&1; then
        rm -rf "$TMP/plot" && mkdir "$TMP/plot"
        run_cs "$TMP/plot.out" "$TMP/plot.err" perf "$TMP/sweep.json" --plot "$TMP/plot/sweep.svg"
        expect_rc "perf --plot with gnuplot" 0 "$TMP/plot.out" "$TMP/plot.err"
        expect_grep "perf --plot draws an SVG" "<svg" "$TMP/plot/sweep.svg"
        if [ "$(files_in "$TMP/plot")" = "sweep.svg " ]; then ok "perf --plot leaves only the SVG"; else not_ok "perf --plot leaves only the SVG"; echo "  files: $(files_in "$TMP/plot")"; fi
    else
        ok "perf --plot with gnuplot (gnuplot not installed: skipped; the message path is tested above)"
    fi
fi

# ---------------------------------------------------------------- hypothetical knob values (btrfs)
# A value that names no real kernel is said so: in a run's story and in perf's header.
sed 's/"config": {"release_extent_maps": "fix-3"}/"config": {"release_extent_maps": "hypothetical-before-fix-without-full-sync"}/' \
    scenarios/btrfs/two-fsyncs-one-file.json >"$TMP/hypothetical-run.json"
run_cs "$TMP/hyp-run.out" "$TMP/hyp-run.err" run "$TMP/hypothetical-run.json" --variant fix-3
expect_rc "run with a hypothetical release_extent_maps" 0 "$TMP/hyp-run.out" "$TMP/hyp-run.err"
expect_grep "run's story says the hypothetical value is not a real kernel" \
    "config    release_extent_maps = hypothetical-before-fix-without-full-sync: a hypothetical setting, not a real kernel" "$TMP/hyp-run.out"
run_cs "$TMP/real-run.out" "$TMP/real-run.err" run scenarios/btrfs/two-fsyncs-one-file.json --variant fix-3
if grep -q "not a real kernel" "$TMP/real-run.out"; then
    not_ok "a run of a released kernel says nothing of hypothetical values"
else
    ok "a run of a released kernel says nothing of hypothetical values"
fi
sed 's/"config": {"log_commit_sleep": "none"}/"config": {"log_commit_sleep": "none", "jiffy_timer": "hypothetical-exact"}/' \
    scenarios/btrfs/log-commit-jiffy-sleep.json >"$TMP/hypothetical-perf.json"
if campaigns "perf's header for a hypothetical value"; then
    run_cs "$TMP/hyp-perf.out" "$TMP/hyp-perf.err" perf "$TMP/hypothetical-perf.json"
    expect_grep "perf's header names the variant with a hypothetical value" \
        "note: variant no-sleep: jiffy_timer = hypothetical-exact: a hypothetical setting, not a real kernel" "$TMP/hyp-perf.out"
fi

# ---------------------------------------------------------------- perf --vary
JIFFY=scenarios/btrfs/log-commit-jiffy-sleep.json
if campaigns "perf --vary write_latency_us=100,400"; then
    run_cs "$TMP/vary.out" "$TMP/vary.err" perf "$JIFFY" --vary write_latency_us=100,400
    expect_rc "perf --vary write_latency_us=100,400" 0 "$TMP/vary.out" "$TMP/vary.err"
    expect_grep "perf --vary names the field it varies" "--vary write_latency_us (\$.device.write_latency_us), throughput ratios:" "$TMP/vary.out"
    if [ "$(grep -Ec '^ +(100|400) +[0-9]+\.[0-9]{2}  (all in range|out of range)' "$TMP/vary.out")" -eq 2 ]; then
        ok "perf --vary prints one row per value with its ratio and verdict"
    else
        not_ok "perf --vary prints one row per value with its ratio and verdict" "$(show "$TMP/vary.out")"
    fi
fi

bad_flag "perf --vary without values" "crashsim: --vary: expected NAME=V1,V2" -- perf "$JIFFY" --vary cpus
bad_flag "perf --vary of an unknown parameter" "crashsim: --vary: expected a parameter name" -- perf "$JIFFY" --vary colour=1,2
bad_flag "perf --vary with a bad value" "crashsim: $JIFFY: \$.machine.cpus: expected an unsigned integer from 1 to 1024, got 0 (--vary cpus=0)" -- perf "$JIFFY" --vary cpus=0,2
bad_flag "perf --points of a value the sweep lacks" "crashsim: --points: expected one of the sweep's values of jobs" -- perf scenarios/btrfs/release-full-sync-cost.json --points 3
bad_flag "perf --vary of an fs_mark field on an fio scenario" "crashsim: --vary: expected a parameter of an fs_mark workload, got \"previous_files\"" -- perf "$JIFFY" --vary previous_files=0,1
bad_flag "perf --vary with --csv" "crashsim: --vary: expected no --csv or --plot" -- perf "$JIFFY" --vary cpus=2,4 --csv "$TMP/flag/v.csv"

# ---------------------------------------------------------------- check (the CI gate, ~6 s)
if campaigns "check scenarios/ (the gate) and its reports"; then
    run_cs "$TMP/check.out" "$TMP/check.err" check scenarios/ --junit "$TMP/check.xml" --json "$TMP/check.json"
    expect_rc "check scenarios/" 0 "$TMP/check.out" "$TMP/check.err"
    if grep -Eq '^check: ([0-9]+) of \1 expectations met$' "$TMP/check.out"; then
        ok "check scenarios/ meets every expectation"
    else
        not_ok "check scenarios/ meets every expectation" "$(tail -n 1 "$TMP/check.out")"
    fi
    rows=$(grep -c ' ok ' "$TMP/check.out")
    cases=$(grep -c '<testcase ' "$TMP/check.xml")
    if [ "$rows" -eq "$cases" ] && grep -q 'failures="0"' "$TMP/check.xml"; then
        ok "check --junit has one passing testcase per variant"
    else
        not_ok "check --junit has one passing testcase per variant" "$rows rows, $cases testcases"
    fi
    expect_grep "check --json reports every variant met" "\"failed\": 0" "$TMP/check.json"
    expect_grep "check --json carries the dfs pruning figure" "\"pruned_by_sleep_sets\"" "$TMP/check.json"
    if grep -q FAILED "$TMP/check.out"; then
        not_ok "check scenarios/ prints no FAILED row" "$(grep FAILED "$TMP/check.out")"
    else
        ok "check scenarios/ prints no FAILED row"
    fi

    # ---------------------------------------------------------------- no vacuous verdicts
    expect_grep "check prints each variant's stake counts" "judged: fsync_durability " "$TMP/check.out"
    expect_grep "check prints each variant's yield-point coverage" "yield points: 17 of 22 reached; never reached: " "$TMP/check.out"
    expect_grep "check --json carries the stake counts" "\"judged\": {" "$TMP/check.json"
    expect_grep "check --json carries each row's exploration bounds" "\"explore\": {" "$TMP/check.json"
    expect_grep "check --json says where daemon wake-ups were not explored" "\"daemon_wakeups\": 0" "$TMP/check.json"
    expect_grep "check --json carries the points never reached" "\"never_reached\": [" "$TMP/check.json"
    expect_grep "check --junit carries the coverage" "judged (crash states with something at stake): " "$TMP/check.xml"
    expect_grep "check sums each model's coverage" "coverage of btrfs: yield points " "$TMP/check.out"
    expect_grep "check sums each model's coverage for xfs too" "coverage of xfs: yield points " "$TMP/check.out"
fi

run_cs "$TMP/cov.out" "$TMP/cov.err" fuzz "$SCEN" --variant fix-2 --schedules 50 --out "$TMP"
expect_rc "fuzz of a holding variant" 0 "$TMP/cov.out" "$TMP/cov.err"
expect_grep "fuzz prints the stake counts" "judged (crash states with something at stake): fsync_durability " "$TMP/cov.out"
expect_grep "fuzz prints the yield-point coverage" "yield points: " "$TMP/cov.out"
run_cs "$TMP/cov.out" "$TMP/cov.err" fuzz "$SCEN" --variant fix-2 --schedules 50 --shard 0/2 --out "$TMP" --result "$TMP/s0.json"
run_cs "$TMP/cov.out" "$TMP/cov.err" fuzz "$SCEN" --variant fix-2 --schedules 50 --shard 1/2 --out "$TMP" --result "$TMP/s1.json"
run_cs "$TMP/cov.out" "$TMP/cov.err" merge "$TMP/s0.json" "$TMP/s1.json"
expect_rc "merge of two shards" 0 "$TMP/cov.out" "$TMP/cov.err"
expect_grep "merge sums the stake counts" "judged (crash states with something at stake): fsync_durability " "$TMP/cov.out"
expect_grep "a shard's result carries the coverage" "\"btrfs.fsync.after_full_sync_check\": " "$TMP/s0.json"
# A holds whose checkers never had anything at stake is vacuous: no fsync, so
# no promise; and data written back but never committed is in no file.
cat >"$TMP/vacuous.json" <<'VACUOUS'
{"name": "cli/vacuous", "model": "btrfs", "device": {"block_size": 4096, "blocks": 2048},
 "setup": [{"op": "create", "file": "I"}, {"op": "commit"}],
 "tasks": [{"name": "app", "ops": [{"op": "write", "file": "I", "offset": 0, "length": 4096}, {"op": "writeback", "file": "I"}]}],
 "checkers": ["fsync_durability", "no_stale_data"],
 "variants": [{"name": "v", "expect": {"holds": true, "fuzz": {"strategies": ["random"], "schedules": 20}}}]}
VACUOUS
run_cs "$TMP/vac.out" "$TMP/vac.err" check "$TMP/vacuous.json" --json "$TMP/vac.json"
expect_rc "check of a holds with nothing at stake" 1 "$TMP/vac.out" "$TMP/vac.err"
expect_grep "check says which checker never judged anything" "vacuous: fsync_durability, no_stale_data never judged a crash state with something at stake" "$TMP/vac.out"
expect_grep "check --json shows its zero count" "\"fsync_durability\": 0" "$TMP/vac.json"
# must_reach: the same scenario with an fsync, requiring a point nothing reaches.
sed -e 's/{"op": "writeback", "file": "I"}/{"op": "fsync", "file": "I"}/' \
    -e 's/"checkers": \[/"must_reach": ["btrfs.fsync.after_full_sync_check", "btrfs.release.before_em_lock"], "checkers": [/' \
    "$TMP/vacuous.json" >"$TMP/reach.json"
run_cs "$TMP/reach.out" "$TMP/reach.err" check "$TMP/reach.json"
expect_rc "check of a variant that never reaches a must_reach point" 1 "$TMP/reach.out" "$TMP/reach.err"
expect_grep "check names the point never reached" "must_reach: never reached in 20 schedules: btrfs.release.before_em_lock" "$TMP/reach.out"
rm -rf "$TMP/flag" && mkdir "$TMP/flag"
sed 's/"btrfs.release.before_em_lock"/"btrfs.release.nowhere"/' "$TMP/reach.json" >"$TMP/reach-bad.json"
bad_flag "check of a must_reach point the model lacks" "crashsim: $TMP/reach-bad.json: \$.must_reach[1]: expected a yield point of model btrfs" -- \
    check "$TMP/reach-bad.json"

# ---------------------------------------------------------------- SIGINT while loading
# A file of a few lines whose fio workload expands into 3000000 operations
# (the most allowed; seconds to load): SIGINT while it loads ends the verb with
# exit 130 and "interrupted while loading FILE".
cat >"$TMP/huge.json" <<'HUGE'
{"name": "cli/huge", "model": "btrfs", "device": {"block_size": 4096, "blocks": 4294967296},
 "workload": {"fio": {"jobs": 3, "rw": "write", "bs": 4096, "size": "4m", "io_size": 2047995904, "fsync": 1}},
 "checkers": ["fsync_durability"], "variants": [{"name": "a", "expect": "holds"}]}
HUGE
"$BIN" run "$TMP/huge.json" >"$TMP/huge.out" 2>"$TMP/huge.err" &
huge_pid=$!
sleep 0.3
kill -INT "$huge_pid"
wait "$huge_pid"
RC=$?
expect_rc "SIGINT while loading" 130 "$TMP/huge.out" "$TMP/huge.err"
expect_grep "SIGINT while loading names the file" "crashsim: interrupted while loading $TMP/huge.json" "$TMP/huge.err"

# ---------------------------------------------------------------- check of a directory with bad files
# A file of a directory that does not load, or whose schedule cannot be
# followed, is an ERROR row; the other scenarios still run, both reports are
# written and check exits 1. A bad file named alone exits 2 (above).
mkdir "$TMP/mixed"
cp "$XFS042" tests/bad_input/number_past_double.json "$TMP/mixed/"
cp "$TMP/unfollowable.json" "$TMP/mixed/unfollowable.json"
run_cs "$TMP/mixed.out" "$TMP/mixed.err" check "$TMP/mixed" --junit "$TMP/mixed.xml" --json "$TMP/mixed.json"
expect_rc "check of a directory with bad files" 1 "$TMP/mixed.out" "$TMP/mixed.err"
# expect_egrep NAME REGEX FILE
expect_egrep "check shows a file that does not load as an ERROR row" \
    "^$TMP/mixed/number_past_double.json +- +loads +ERROR " "$TMP/mixed.out"
expect_grep "check prints the file's message under its row" \
    "    $TMP/mixed/number_past_double.json: \$.device.blocks: expected a number a double can hold, got 1e400" "$TMP/mixed.out"
expect_egrep "check shows a variant whose schedule cannot be followed as an ERROR row" \
    "^btrfs/fast-fsync-vs-page-release +before-fix .* ERROR " "$TMP/mixed.out"
expect_egrep "check still runs the other scenarios" "^xfs/generic-042 +fix +holds +ok " "$TMP/mixed.out"
expect_egrep "check counts the errors" "; [0-9]+ ERROR \(a scenario file or run that failed on its input\)\$" "$TMP/mixed.out"
expect_grep "check --junit shows the bad file as an error" \
    "<error type=\"input\" message=\"$TMP/mixed/number_past_double.json: \$.device.blocks: " "$TMP/mixed.xml"
expect_egrep "check --junit counts the errors" "errors=\"[1-9]" "$TMP/mixed.xml"
expect_grep "check --json shows the bad file as an error entry" \
    "\"error\": \"$TMP/mixed/number_past_double.json: \$.device.blocks: " "$TMP/mixed.json"

. "$ROOT/tests/kernel_test.sh"  # crashsim kernel, on the real kernel
[ "$SKIPPED" -eq 0 ] || echo "cli: $SKIPPED campaign-sized blocks left out (CLI_CAMPAIGNS=skip)"
echo "cli: $PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
