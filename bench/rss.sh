#!/usr/bin/env bash
# bench/rss.sh: peak memory of a fuzz campaign at 10^3 and at 10^6 schedules,
# to show that memory stays flat over a long campaign ("memory flat
# over a campaign of 10^6 schedules").
#
#   bench/rss.sh                       (from anywhere; build/crashsim must exist)
#   SCHEDULES=100000 bench/rss.sh      (the long campaign's length; default 10^6)
#
# Runs `crashsim fuzz` on a variant that holds (so every schedule runs, none
# stops the campaign early) with random and PCT strategies, under GNU time,
# and prints the peak resident set size (ru_maxrss) of each run. Peak RSS is
# what the kernel reports for the whole process; a leak per schedule would
# show as growth from the short run to the long one.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
crashsim="$root/build/crashsim"
[ -x "$crashsim" ] || { echo "rss.sh: $crashsim is missing: build it first (tools/gate or tools/test)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "rss.sh: /usr/bin/time is missing (Debian package: time)" >&2; exit 2; }
long="${SCHEDULES:-1000000}"
scenario="$root/scenarios/btrfs/fast-fsync-vs-page-release.json"
printf '%-8s %12s %14s %10s\n' strategy schedules "peak RSS KiB" seconds
for strategy in random pct:3; do
    for n in 1000 "$long"; do
        out="$(/usr/bin/time -f '%M %e' "$crashsim" fuzz "$scenario" --variant fix-3 \
            --strategy "$strategy" --schedules "$n" --quiet 2>&1 >/dev/null | tail -n 1)"
        printf '%-8s %12s %14s %10s\n' "$strategy" "$n" ${out}
    done
done
