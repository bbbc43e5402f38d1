# The kernel verb's checks (crashsim kernel): sourced by tests/cli_test.sh,
# whose BIN, TMP, ok, not_ok, run_cs and show it uses. Two bundled scenarios
# per file system run on the real kernel through the logging device; each
# must hold on every checker, and each with a returned fsync must catch its
# negative control. Where the machine cannot run it, one `skip - ...` line
# names what is missing.

kernel_missing() {
    missing=""
    [ "$(id -u)" -eq 0 ] || missing="$missing root"
    [ -c /dev/fuse ] || missing="$missing /dev/fuse"
    [ -c /dev/loop-control ] || missing="$missing /dev/loop-control"
    for tool in losetup mkfs.ext4 e2fsck mkfs.xfs xfs_repair mkfs.btrfs btrfs; do
        command -v "$tool" >/dev/null 2>&1 || missing="$missing $tool"
    done
    [ -n "$missing" ] || losetup -f >/dev/null 2>&1 || missing="$missing a free loop device"
    echo "$missing"
}

# Mounts and loop devices a kernel run made (its scratch directory's name).
kernel_leftovers() {
    { grep crashsim-kernel /proc/mounts; losetup -a | grep crashsim-kernel; } 2>/dev/null
}

kernel_scenario() {
    name=$1
    control=$2  # caught, or none (no fsync in the scenario)
    run_cs "$TMP/kernel.out" "$TMP/kernel.err" kernel "scenarios/$name.json"
    if [ "$RC" -ne 0 ]; then
        not_ok "kernel $name: exits 0 (got $RC)" "$(show "$TMP/kernel.err")" \
            "$(tail -n 30 "$TMP/kernel.out")"
        return
    fi
    ok "kernel $name: exits 0"
    for checker in mount fsync_durability no_stale_data fs_consistency; do
        if grep -Eq "^  $checker +holds in [1-9][0-9]* state" "$TMP/kernel.out"; then
            ok "kernel $name: $checker holds on the real kernel's crash states"
        else
            not_ok "kernel $name: $checker holds on the real kernel's crash states" \
                "$(grep "^  $checker" "$TMP/kernel.out")"
        fi
    done
    case $control in
        caught) pattern="^negative control: dropped durable write .* caught: " ;;
        *) pattern="^negative control: no durable write holds data a returned fsync promised" ;;
    esac
    if grep -Eq "$pattern" "$TMP/kernel.out"; then
        ok "kernel $name: negative control ($control)"
    else
        not_ok "kernel $name: negative control ($control)" "$(grep "negative control" "$TMP/kernel.out")"
    fi
    grep -q "^  real:  [1-9][0-9]* writes" "$TMP/kernel.out" &&
        grep -q "^  model: [0-9]* writes" "$TMP/kernel.out" &&
        ok "kernel $name: prints both device traffics" ||
        not_ok "kernel $name: prints both device traffics" "$(grep -A2 "^device traffic" "$TMP/kernel.out")"
}

kernel_interrupt() {
    "$BIN" kernel scenarios/btrfs/two-fsyncs-one-file.json >"$TMP/kernel-int.out" 2>"$TMP/kernel-int.err" &
    pid=$!
    # The interrupt comes while the run holds a mount or a loop device (the
    # whole run takes about 2 s, so a fixed delay could come after its end).
    for _ in $(seq 1 400); do
        [ -n "$(kernel_leftovers)" ] && break
        sleep 0.05
    done
    kill -INT "$pid"
    wait "$pid"
    rc=$?
    left=$(kernel_leftovers)
    if [ "$rc" -eq 130 ] && [ -z "$left" ]; then
        ok "kernel: SIGINT exits 130 and leaves no mount, loop device or FUSE server"
    else
        not_ok "kernel: SIGINT exits 130 and leaves no mount, loop device or FUSE server" "exit $rc" "$left" \
            "$(show "$TMP/kernel-int.err")"
    fi
}

kernel_tests() {
    missing=$(kernel_missing)
    if [ -n "$missing" ]; then
        echo "skip - kernel: the machine lacks$missing"
        return
    fi
    if [ "${CLI_CAMPAIGNS:-}" = skip ]; then
        echo "skip - kernel: real-kernel runs are left out with the campaigns (CLI_CAMPAIGNS=skip)"
        return
    fi
    kernel_scenario jbd2/sync-durability caught
    kernel_scenario jbd2/unlink-reuse caught
    kernel_scenario xfs/generic-042 none
    kernel_scenario xfs/truncate-fsync-sizes caught
    kernel_scenario btrfs/two-fsyncs-one-file caught
    kernel_scenario btrfs/direct-write-fsync caught
    run_cs "$TMP/kernel.out" "$TMP/kernel.err" kernel scenarios/jbd2/flusher-writeback.json
    if [ "$RC" -eq 2 ] && grep -q "operation \`shrink\` has no real counterpart" "$TMP/kernel.err"; then
        ok "kernel: an operation without a real counterpart is refused by name"
    else
        not_ok "kernel: an operation without a real counterpart is refused by name" "exit $RC" \
            "$(show "$TMP/kernel.err")"
    fi
    run_cs "$TMP/kernel.out" "$TMP/kernel.err" kernel --generic-042
    passes=$(grep -c "^  [a-z -]* pass: size [0-9]*, [0-9]* bytes of 0x01, 0 bytes of 0xCD" "$TMP/kernel.out")
    name="kernel --generic-042: fstests' three crash tests pass on xfs beside the model's variants"
    if [ "$RC" -eq 0 ] && [ "$passes" -eq 3 ] &&
        grep -Eq "^  before-fix +violates no_stale_data" "$TMP/kernel.out" &&
        grep -Eq "^  fix +holds" "$TMP/kernel.out"; then
        ok "$name"
    else
        not_ok "$name" "exit $RC" \
            "$(show "$TMP/kernel.out")" "$(show "$TMP/kernel.err")"
    fi
    kernel_interrupt
    left=$(kernel_leftovers)
    [ -z "$left" ] && ok "kernel: no run left a mount or loop device behind" ||
        not_ok "kernel: no run left a mount or loop device behind" "$left"
}

kernel_tests
