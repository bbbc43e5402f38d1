#!/usr/bin/env bash
# bench/reduction-soundness.sh: the default dfs search (sleep sets) against
# the unreduced one (--no-reduction: every interleaving within the bound) on
# every variant of every bundled scenario, compared by what they reach: the
# number of distinct crash states without a violation that fuzz prints (the
# verdict memo's keys: image, promises and freeze level by content). A
# reduction that loses a class can lose states while the verdict still agrees
# (a daemon's first sleep commuted with timers is such a reduction).
#
#   bench/reduction-soundness.sh            (from the repository root, or from anywhere)
#   BOUNDS="0 1 2" ...                      (preemption bounds; default "0 1")
#   CAP=30000 ...                           (the default search's cap; the unreduced one gets 10x)
#   ONLY="btrfs/ kthread" ...               (only scenario paths containing one of these words)
#   CRASHSIM=/path/to/crashsim ...          (another binary; default build/crashsim)
#
# One line per search: SAME, DIFFER (exit 1 at the end), NO-MEMO (device
# faults: the memo is off, nothing to count; the verdicts are printed) or
# SKIPPED (a search passed its cap; that variant's higher bounds are skipped
# too). Performance scenarios are skipped.
set -euo pipefail

# shellcheck source=bench/soundness-lib.sh
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/soundness-lib.sh"
soundness_setup reduction-soundness.sh "0 1" 30000

# search SCEN VARIANT P CAP [--no-reduction] -> "complete|capped SCHEDULES DISTINCT|- VERDICT"
# (VERDICT: holds, or the checkers the violating schedules' first violations name)
search() {
    if ! soundness_fuzz "$@"; then
        echo "error 0 - error"
        return
    fi
    jq -r --arg distinct "$distinct" '
        [ (if .dfs.complete == true then "complete" else "capped" end),
          (.schedules_run | tostring), $distinct,
          ((.violations | map(.checker) | unique | join(",")) | if . == "" then "holds" else . end)
        ] | join(" ")' "$work/result.json"
}

same=0 differ=0 nomemo=0 skipped=0
for scen in scenarios/*/*.json; do
    case "$scen" in scenarios/schema/*) continue ;; esac
    soundness_selected "$scen" || continue
    [ "$(jq 'has("perf")' "$scen")" = true ] && continue
    name="${scen#scenarios/}"
    name="${name%.json}"
    mapfile -t variants < <(jq -r '.variants[].name' "$scen")
    for variant in "${variants[@]}"; do
        for p in $BOUNDS; do
            read -r r_done r_sch r_distinct r_verdict < <(search "$scen" "$variant" "$p" "$CAP")
            if [ "$r_done" != complete ]; then
                echo "SKIPPED  $name $variant dfs:$p: the default search passed $CAP schedules"
                skipped=$((skipped + 1))
                break
            fi
            read -r u_done u_sch u_distinct u_verdict < <(search "$scen" "$variant" "$p" "$((10 * CAP))" --no-reduction)
            if [ "$u_done" != complete ]; then
                echo "SKIPPED  $name $variant dfs:$p: the unreduced search passed $((10 * CAP)) schedules"
                skipped=$((skipped + 1))
                break
            fi
            line="$name $variant dfs:$p: default $r_sch schedules, $r_distinct distinct, $r_verdict; unreduced $u_sch, $u_distinct, $u_verdict"
            if [ "$r_distinct" = - ] && [ "$u_distinct" = - ] && [ "$r_verdict" = "$u_verdict" ]; then
                echo "NO-MEMO  $line"
                nomemo=$((nomemo + 1))
            elif [ "$r_distinct" = "$u_distinct" ] && [ "$r_verdict" = "$u_verdict" ]; then
                echo "SAME     $line"
                same=$((same + 1))
            else
                echo "DIFFER   $line"
                differ=$((differ + 1))
            fi
        done
    done
done
echo "summary: $same same, $differ differ, $nomemo without a memo (verdicts agree), $skipped skipped at a cap; bounds $BOUNDS, cap $CAP (unreduced $((10 * CAP)))"
[ "$differ" = 0 ]
