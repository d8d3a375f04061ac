#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# tests/vm/run-debug-kernel.sh [SUITE...]   (make check-vm-debug)
#
# The guest suites on the debug kernel (scripts/build-debug-kernel.sh:
# 6.12 with KASAN, lockdep, DEBUG_ATOMIC_SLEEP, kmemleak, DEBUG_LIST).
# Builds (or finds cached) the kernel, builds mdgpu.ko and mdgpu-guest.ko
# against it, then runs each SUITE with the usual runner, booting the
# debug kernel (VM_KROOT) with warnings on the console (loglevel=5) and
# every KASAN report (kasan_multi_shot):
#   vm      tests/vm/run-vm.sh        (make check-vm)
#   e2e     tests/e2e/run-e2e.sh      (make check-e2e)
#   nested  tests/e2e/run-e2e-nested.sh (make check-e2e-nested; the inner
#           guest boots the debug kernel too)
# Default: vm e2e.  A suite fails if its runner does (a failed check, a
# crash, a timeout) or if tests/vm/kernel-reports.sh finds a report of a
# detector (or any kernel WARNING/BUG) on the guest's console; the
# guest's /init also reads kmemleak (tests/vm/kmemleak).  Prints each
# suite's wall time, the build's, and a summary; exit status non-zero if a
# suite failed.
#
# Expects the static test programs (make vm-test-bin e2e-bins).
# Environment: BUILD, DEBUG_KERNEL_DIR (scripts/build-debug-kernel.sh),
# DEBUG_VM_TIMEOUT (default 900 s per guest; nested 1800).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
BUILD=${BUILD:-$top/build}
export BUILD
dir=${DEBUG_KERNEL_DIR:-$top/.cache/debug-kernel}
export DEBUG_KERNEL_DIR=$dir
timeout_s=${DEBUG_VM_TIMEOUT:-900}
[ $# -gt 0 ] || set -- vm e2e

now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.0f", b - a }'; }

t0=$(now)
"$top/scripts/build-debug-kernel.sh"
t1=$(now)
kdir=$dir/obj
rel=$(cat "$kdir/include/config/kernel.release")
export VM_KROOT=$dir/root
# Warnings (lockdep's reports among them) reach the console (the last
# loglevel= wins); KASAN reports every bad access, not only the first.
export VM_APPEND="loglevel=5 kasan_multi_shot"
echo "debug-kernel: $rel ready in $(secs "$t0" "$t1") s"

# Modules: a failed build does not stop the run (the suites report it).
make -C "$top" --no-print-directory -s modules KDIR="$kdir" ||
	echo "debug-kernel: mdgpu.ko build against $rel failed" >&2
case " $* " in
*" nested "*)
	make -C "$top" --no-print-directory -s guest-modules GUEST_KDIR="$kdir" ||
		echo "debug-kernel: mdgpu-guest.ko build against $rel failed" >&2
	;;
esac

summary=
rc=0
for suite; do
	ts=$(now)
	src=0
	case $suite in
	vm)
		VM_TIMEOUT=$timeout_s "$here/run-vm.sh" "$rel" || src=$?
		log=$BUILD/vm/$rel/serial.log.txt
		;;
	e2e)
		E2E_TIMEOUT=$timeout_s "$top/tests/e2e/run-e2e.sh" "$rel" || src=$?
		log=$BUILD/e2e/$rel/serial-test.log.txt
		;;
	nested)
		E2E_NESTED_TIMEOUT=${DEBUG_VM_TIMEOUT:-1800} \
		E2E_NESTED_INNER_TIMEOUT=$(( ${DEBUG_VM_TIMEOUT:-1800} - 60 )) \
		NESTED_BOOT_TIMEOUT=$(( ${DEBUG_VM_TIMEOUT:-1800} / 2 )) \
			"$top/tests/e2e/run-e2e-nested.sh" "$rel" || src=$?
		log=$BUILD/e2e-nested/$rel/serial.log.txt
		;;
	*)
		echo "debug-kernel: unknown suite '$suite' (vm, e2e, nested)" >&2
		exit 2
		;;
	esac
	te=$(now)
	result=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$log" 2>/dev/null |
		tail -n1 || true)
	reports=ok
	"$here/kernel-reports.sh" "debug-kernel: $suite" "$log" || reports=REPORTS
	[ "$src" -eq 0 ] && [ "$reports" = ok ] || rc=1
	line="$suite: ${result:-no summary} (runner status $src), kernel reports: $reports, $(secs "$ts" "$te") s"
	echo "debug-kernel: $line"
	summary="$summary  $line
"
done
echo "debug-kernel: $rel, kernel build $(secs "$t0" "$t1") s; total $(secs "$t0" "$(now)") s"
printf '%s' "$summary"
exit $rc
