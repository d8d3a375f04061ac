# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0
# tests/nested/boot-outer.sh: sourced by the two nested runners
# (tests/nested/run-nested.sh, tests/e2e/run-e2e-nested.sh).
#
# nested_boot_outer TAG REL KROOT INITRD LOG TIMEOUT_S INNER_TIMEOUT_S INNER_CPU
#   Boots the outer TCG guest (Debian's kernel REL from KROOT, INITRD) with
#   its console in LOG and a copy without CR and escape sequences in
#   LOG.txt.  When the inner kernel failed before its /init ran
#   (nested_boot_failed: QEMU 7.2's TCG inside TCG, before any mdgpu code
#   was loaded in the inner guest) it says so, keeps the first console as
#   LOG.attempt1.txt and boots the outer guest once more.  Sets rc (QEMU's
#   exit status), start and end (wall clock, seconds) of the last boot.
#   The outer command line carries nested.* for /init (outer-init,
#   nested-outer-init) and NESTED_BOOT_TIMEOUT (the inner boot watchdog of
#   run-inner, default 300 s: the inner /init starts after 60-130 s here
#   and up to 1.5 times that on CI's machine) and NESTED_VERBOSE, then
#   VM_APPEND (more arguments, as tests/vm/run-vm.sh).

# nested_boot_failed LOG_TXT
#   True when the inner kernel never ran its /init (no "nested-inner:
#   booted" line) because it panicked, or because run-inner's boot
#   watchdog found it hung.  Seen: a double fault on cmpxchg16b in SLUB (1
#   run in about 6 on 6.12) and a silent hang of the 6.12 inner boot past
#   540 s (CI, where the inner 6.1 /init started after 86 s).
nested_fail_re='^inner\| .*Kernel panic|^nested-outer: inner kernel hung before its /init'
nested_boot_failed() {
	! grep -q '^inner| nested-inner: booted' "$1" &&
		grep -qE "$nested_fail_re" "$1"
}

# nested_where_hung LOG_TXT
#   The inner vCPU's RIP and flags from run-inner's register dump
#   ("inner-regs| ").  The inner kernel runs with nokaslr, so RIP can be
#   looked up in the System.map of Debian's linux-image-<release>-dbg
#   (the linux-image package ships a stub System.map).
nested_where_hung() {
	sed -n 's/^inner-regs| \(RIP=.*\)/inner kernel at \1/p' "$1" | head -n1
}

# shellcheck disable=SC2034  # rc, start, end: read by the caller
nested_boot_outer() {
	local tag=$1 rel=$2 kroot=$3 initrd=$4 log=$5 timeout_s=$6
	local inner_timeout_s=$7 inner_cpu=$8 attempt
	for attempt in 1 2; do
		start=$(date +%s.%N)
		rc=0
		timeout -k 5 "$timeout_s" qemu-system-x86_64 -accel tcg -cpu "${NESTED_CPU:-qemu64}" \
			-m 2G -smp 1 -nographic -no-reboot -net none \
			-kernel "$kroot/boot/vmlinuz-$rel" -initrd "$initrd" \
			-append "console=ttyS0 panic=-1 quiet loglevel=4 nested.timeout=$inner_timeout_s nested.boot_timeout=${NESTED_BOOT_TIMEOUT:-300} nested.cpu=$inner_cpu nested.verbose=${NESTED_VERBOSE:-0} ${VM_APPEND:-}" \
			</dev/null >"$log" 2>&1 || rc=$?
		end=$(date +%s.%N)
		sed 's/\r//g; s/\x1b\[[0-9;?]*[a-zA-Z]//g; s/\x1bc//g' "$log" >"$log.txt"
		if [ "$attempt" -eq 2 ] || ! nested_boot_failed "$log.txt"; then
			break
		fi
		echo "$tag: $rel: the inner kernel failed before its /init (TCG-in-TCG" \
			"emulation fault or hang, no mdgpu code loaded yet; see" \
			"$log.attempt1.txt); booting once more" >&2
		grep -E "$nested_fail_re" "$log.txt" >&2 || true
		nested_where_hung "$log.txt" >&2
		cp "$log.txt" "$log.attempt1.txt"
	done
	if nested_boot_failed "$log.txt"; then
		echo "$tag: $rel: the inner kernel failed before its /init again" >&2
		nested_where_hung "$log.txt" >&2
	fi
}
