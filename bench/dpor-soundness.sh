#!/usr/bin/env bash
# bench/dpor-soundness.sh: dpor (`fuzz --dpor`) against the unreduced search
# (dfs with sleep sets only) on every variant of every bundled scenario.
#
#   bench/dpor-soundness.sh                 (from the repository root, or from anywhere)
#   BOUNDS="0 1 2" bench/dpor-soundness.sh  (preemption bounds; default "0 1 2 3")
#   CAP=200000 ...                          (unreduced schedule cap; dpor gets 10x; default 200000)
#   ONLY="jbd2/ xfs/delalloc" ...           (only scenarios whose path contains one of these words)
#   CRASHSIM=/path/to/crashsim ...          (another binary; default build/crashsim)
#
# For each search it runs `fuzz SCEN --variant V --strategy dfs:P --all`
# (--all: keep searching past the first violation, so every violating
# schedule is counted) without --dpor and a schedule cap of CAP; when that
# completes, the same with --dpor and a cap of 10*CAP. Figures come from the
# result JSON (fuzz --result, read with jq). One markdown table row per
# search:
#   scenario | variant | P | unreduced schedules, verdict | dpor schedules, verdict
#   | checkers violated (unreduced) | checkers violated (dpor) | AGREE / DISAGREE / SKIPPED
#   | the distinct first messages, step numbers masked: same or differ (not part of AGREE)
#   | milliseconds | distinct crash states without a violation (unreduced / dpor)
# AGREE: both complete, same verdict (violated or holds), the same set of
# checkers in the schedules' first violations, and the same number of
# distinct crash states without a violation (fuzz's "distinct crash states"
# line; "-" on both sides where the verdict memo is not used). SKIPPED (cap): the unreduced
# search passed CAP (the higher bounds of that variant are then skipped
# too, without running: a larger bound only adds schedules); SKIPPED (dpor
# cap): dpor passed 10*CAP. Performance scenarios (a "perf" section) are
# skipped and named. Ends with a summary line; exits 1 on any DISAGREE.
set -euo pipefail

# shellcheck source=bench/soundness-lib.sh
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/soundness-lib.sh"
soundness_setup dpor-soundness.sh "0 1 2 3" 200000

# run SCEN VARIANT P CAP [--dpor] -> "complete schedules verdict checkers seconds"
run() {
    local result="$work/result.json" tag=".unreduced"
    [ "${*:5}" = "--dpor" ] && tag=".dpor"
    if ! soundness_fuzz "$@"; then
        echo "error 0 error - 0 -"
        return
    fi
    # The distinct first messages, step numbers masked ("returned at step 29"
    # is not the same across equivalent interleavings: independent steps
    # before it shift it), for the messages column.
    jq -r '.violations[].message' "$result" | sed -E 's/step [0-9]+/step N/g; s/steps [0-9]+ to [0-9]+/steps N to N/g' |
        sort -u >"$work/messages$tag"
    jq -r --arg secs "$fuzz_ms" --arg distinct "$distinct" '
        [ (if .dfs.complete == true then "complete" else "capped" end),
          (.schedules_run | tostring),
          (if (.violations | length) > 0 then "violated" else "holds" end),
          ((.violations | map(.checker) | unique | join(",")) | if . == "" then "-" else . end),
          $secs, $distinct ] | join(" ")' "$result"
}

agree=0 disagree=0 skipped=0 dpor_capped=0
skipped_perf=()
messages_differ=()
echo "| scenario | variant | P | unreduced | dpor | checkers (unreduced) | checkers (dpor) | | first messages, steps masked | ms (unreduced / dpor) | distinct crash states (unreduced / dpor) |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
for scen in scenarios/*/*.json; do
    case "$scen" in scenarios/schema/*) continue ;; esac
    name="${scen#scenarios/}"
    name="${name%.json}"
    soundness_selected "$scen" || continue
    if [ "$(jq 'has("perf")' "$scen")" = true ]; then
        skipped_perf+=("$name")
        continue
    fi
    mapfile -t variants < <(jq -r '.variants[].name' "$scen")
    for variant in "${variants[@]}"; do
        capped_at=""
        for p in $BOUNDS; do
            if [ -n "$capped_at" ]; then
                echo "| $name | $variant | $p | not run | not run | | | SKIPPED (cap at P=$capped_at) | | | |"
                skipped=$((skipped + 1))
                continue
            fi
            read -r u_done u_sch u_verdict u_checkers u_ms u_states < <(run "$scen" "$variant" "$p" "$CAP")
            if [ "$u_done" != complete ]; then
                echo "| $name | $variant | $p | >$u_sch ($u_done) | not run | $u_checkers | | SKIPPED (cap) | | $u_ms / | |"
                skipped=$((skipped + 1))
                capped_at="$p"
                continue
            fi
            read -r d_done d_sch d_verdict d_checkers d_ms d_states < <(run "$scen" "$variant" "$p" "$((10 * CAP))" --dpor)
            if [ "$d_done" != complete ]; then
                status="SKIPPED (dpor cap)"
                dpor_capped=$((dpor_capped + 1))
            elif [ "$u_verdict" = "$d_verdict" ] && [ "$u_checkers" = "$d_checkers" ] && [ "$u_states" = "$d_states" ]; then
                status="AGREE"
                agree=$((agree + 1))
            else
                status="DISAGREE"
                disagree=$((disagree + 1))
            fi
            u_n=$(wc -l <"$work/messages.unreduced")
            d_n=$(wc -l <"$work/messages.dpor")
            if cmp -s "$work/messages.unreduced" "$work/messages.dpor"; then
                messages="same ($u_n)"
            else
                messages="differ ($u_n / $d_n)"
                messages_differ+=("$name $variant dfs:$p")
            fi
            echo "| $name | $variant | $p | $u_sch $u_verdict | $d_sch $d_verdict | $u_checkers | $d_checkers | $status | $messages | $u_ms / $d_ms | $u_states / $d_states |"
        done
    done
done
echo
echo "performance scenarios skipped: ${skipped_perf[*]:-none}"
echo "first messages (step numbers masked) differ on: ${messages_differ[*]:-none}"
echo "summary: $agree agree, $disagree disagree, $skipped skipped at the unreduced cap ($CAP), $dpor_capped skipped at the dpor cap ($((10 * CAP))); bounds $BOUNDS"
[ "$disagree" = 0 ]
