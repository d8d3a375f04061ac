# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0
# tests/nested/boot-outer.sh: sourced by the two nested runners
# (tests/nested/run-nested.sh, tests/e2e/run-e2e-nested.sh) and by its
# test, tests/nested/test-boot-outer.sh.
#
# nested_boot_outer TAG REL KROOT INITRD LOG TIMEOUT_S INNER_TIMEOUT_S INNER_CPU
#   Boots the outer TCG guest (Debian's kernel REL from KROOT, INITRD) with
#   its console in LOG and a copy without CR and escape sequences in
#   LOG.txt.  When the boot failed for a reason nested_retry_reason
#   accepts (a TCG-in-TCG fault of the inner kernel that names no mdgpu
#   code) it says why, keeps the first console as LOG.attempt1.txt and
#   boots the outer guest once more, never a third time.  Sets rc (QEMU's
#   exit status), start and end (wall clock, seconds) of the last boot.
#   The outer command line carries nested.* for /init (outer-init,
#   nested-outer-init) and NESTED_BOOT_TIMEOUT (the inner boot watchdog of
#   run-inner, default 300 s: the inner /init starts after 60-130 s here
#   and up to 1.5 times that on CI's machine) and NESTED_VERBOSE, then
#   VM_APPEND (more arguments, as tests/vm/run-vm.sh).

# nested_inner_cpu REL
#   The inner guest's -cpu model for kernel release REL (NESTED_INNER_CPU
#   overrides it).  6.1: qemu64, about 1.5 times faster nested than max.
#   Later kernels die early nested on qemu64 (a general protection fault
#   on an iretq whose frame holds garbage RFLAGS), and on max they took,
#   in 1 boot in 6 on CI and in 4 of 4 boots on a loaded machine, a
#   double fault right after SLUB's `cmpxchg16b %gs:(%rsi)` with garbage
#   RFLAGS again: QEMU 7.2's TCG inside TCG, before any mdgpu code ran.
#   Without CX16 the kernel's SLUB takes its path without cmpxchg16b:
#   max,-cx16 (Documentation/guest-driver.md).
nested_inner_cpu() {
	case $1 in
	6.1.*) echo "${NESTED_INNER_CPU:-qemu64}" ;;
	*) echo "${NESTED_INNER_CPU:-max,-cx16}" ;;
	esac
}

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

# nested_inner_crash LOG_TXT
#   Reads the inner kernel's console messages (lines "inner| [  time] ...")
#   and prints one line:
#     "mdgpu LINE"    a crash line (Oops, double fault, general protection
#                     fault, panic), a RIP line or a line of a call trace
#                     names mdgpu (LINE is the first such line).  A call
#                     trace anywhere in the inner log counts, a WARNING's
#                     included, so mdgpu code that warned before the crash
#                     keeps it from being retried;
#     "outside KIND"  the inner kernel crashed (KIND: double fault, general
#                     protection fault, Oops or panic, from its first crash
#                     line), it printed a RIP or a call trace, and none of
#                     those lines names mdgpu;
#     "no-trace KIND" it crashed without a RIP or call trace to judge;
#   nothing when the inner kernel did not crash.  "Modules linked in:" and
#   the "CPU: ... Comm:" line are not judged: they name what was loaded
#   and running, not where the kernel was.
nested_inner_crash() {
	awk '
	function judge(l) {
		if (named == "" && tolower(l) ~ /mdgpu/) {
			named = l
			sub(/^ +/, "", named)
		}
	}
	/^inner\| \[ *[0-9]+\.[0-9]+\] / {
		l = $0
		sub(/^inner\| \[ *[0-9]+\.[0-9]+\] /, "", l)
		if (l ~ /Oops|double fault|general protection fault|[Kk]ernel panic/) {
			if (kind == "") {
				if (l ~ /double fault/)
					kind = "double fault"
				else if (l ~ /general protection fault/)
					kind = "general protection fault"
				else if (l ~ /Oops/)
					kind = "Oops"
				else
					kind = "panic"
			}
			judge(l)
		}
		if (l ~ /Call Trace:/)
			trace = 1
		else if (l ~ /<\/TASK>|---\[ end trace|Modules linked in:/)
			trace = 0
		else if (trace) {
			frames++
			judge(l)
		}
		if (l ~ /RIP: /) {
			frames++
			judge(l)
		}
	}
	END {
		if (named != "")
			print "mdgpu " named
		else if (kind != "" && frames)
			print "outside " kind
		else if (kind != "")
			print "no-trace " kind
	}' "$1"
}

# nested_retry_reason LOG_TXT RC
#   Prints why the boot whose console is LOG_TXT and QEMU exit status RC
#   is worth booting once more, and returns 0; returns 1 when it is not:
#   - the inner kernel failed before its /init (nested_boot_failed); or
#   - the run failed (no "N passed, 0 failed" with RC 0) and the inner
#     kernel crashed with a RIP or call trace that names no mdgpu code
#     (nested_inner_crash "outside").  Seen on CI: a double fault in
#     kmem_cache_alloc_noprof under execve in the 6.12 inner guest, before
#     mdgpu-guest.ko was loaded, in a run whose suite had passed every time
#     before (Documentation/guest-driver.md, "Decisions").
#   A crash that names mdgpu is never a reason, before the inner /init
#   or after it; after it, neither is a crash without a RIP or trace.
nested_retry_reason() {
	local crash
	crash=$(nested_inner_crash "$1")
	case $crash in
	"mdgpu "*) return 1 ;;
	esac
	if nested_boot_failed "$1"; then
		echo "the inner kernel failed before its /init (TCG-in-TCG" \
			"emulation fault or hang, no mdgpu code loaded yet)"
		return 0
	fi
	if [ "$2" -eq 0 ] && grep -qE '^[0-9]+ passed, 0 failed$' "$1"; then
		return 1
	fi
	case $crash in
	"outside "*)
		echo "inner guest kernel crashed outside mdgpu (${crash#outside })"
		return 0 ;;
	esac
	return 1
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
	local inner_timeout_s=$7 inner_cpu=$8 attempt why='' crash
	rm -f "$log.attempt1.txt"
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
		if [ "$attempt" -eq 2 ] || ! why=$(nested_retry_reason "$log.txt" "$rc"); then
			break
		fi
		echo "$tag: $rel: $why; retrying once (the first console is" \
			"kept beside the serial log as serial.log.attempt1.txt)" >&2
		grep -E "$nested_fail_re|^inner\| \[ *[0-9.]+\] (.*(Oops|double fault|general protection fault|[Kk]ernel panic)|RIP: )" \
			"$log.txt" | head -n 4 >&2 || true
		nested_where_hung "$log.txt" >&2
		cp "$log.txt" "$log.attempt1.txt"
	done
	crash=$(nested_inner_crash "$log.txt")
	if [ "$attempt" -eq 2 ] && why=$(nested_retry_reason "$log.txt" "$rc"); then
		echo "$tag: $rel: the second boot failed too ($why): counted" \
			"as a failure" >&2
		nested_where_hung "$log.txt" >&2
	elif [ "${crash%% *}" = mdgpu ]; then
		echo "$tag: $rel: the inner kernel crashed with mdgpu in its" \
			"trace: not retried (${crash#mdgpu })" >&2
	fi
}
