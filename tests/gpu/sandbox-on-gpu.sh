#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# The worker sandbox on the GPU machine (Documentation/daemon.md, "Worker
# sandbox"), run from the repository root as root.  It measures what the
# real CUDA driver needs inside mdgpud-worker and says whether each
# protection works there:
#
#   0. the machine: kernel, ids, capabilities, /dev/nvidia* modes,
#      fs.suid_dumpable, yama, seccomp actions, `unshare -m`;
#   1. audit: test_cuda_backend with every worker syscall reported
#      (worker_seccomp = audit), sandbox best-effort: the driver's whole
#      syscall set -> $OUT/sandbox-audit-syscalls.txt;
#   2. learn: the same with the allowlist in force but syscalls outside it
#      reported and let through (worker_seccomp = learn), sandbox required:
#      what the allowlist lacks -> $OUT/sandbox-missing-syscalls.txt
#      (empty: the allowlist covers the driver);
#   3. enforce: test_cuda_backend and test_core_hang (real driver) with the
#      sandbox required and seccomp enforcing, as production runs: cuInit,
#      modules and kernels in workers that each have a network namespace
#      and a private /tmp (worker_net, worker_tmp = private, the defaults);
#      then test_cuda_backend with worker_net = host and with worker_tmp =
#      shared, so that a failure of the defaults names its cause;
#   4. off: test_cuda_backend without the sandbox, to tell failures the
#      sandbox causes from others.
#   If 3 fails and 2 found syscalls, 3 is repeated with them allowed
#   (MDGPUD_TEST_SECCOMP_ALLOW) to show whether they are all it needs.
#
# Output: $OUT (default /tmp/mdgpu-sandbox) holds one log per pass and
# summary.txt, which ends with one line per pass, e.g.
#   PASS enforce test_cuda_backend   or   FAIL enforce test_cuda_backend
set -u
set -o pipefail
cd "$(dirname "$0")/../.." || exit 2
TOP=$PWD
OUT=${OUT:-/tmp/mdgpu-sandbox}
mkdir -p "$OUT"
JOBS=$(nproc 2>/dev/null || echo 4)
B=$TOP/build
SUM=$OUT/summary.txt
: >"$SUM"

# shellcheck source=tests/gpu/deb-deps.sh
. "$TOP/tests/gpu/deb-deps.sh"
mdgpu_deb_deps cmocka cmocka.h 'libcmocka.so*' cmocka run
# shellcheck source=tests/gpu/seccomp-deps.sh
. "$TOP/tests/gpu/seccomp-deps.sh"

say() { echo "$*" | tee -a "$SUM"; }

make -j"$JOBS" "$B/mdgpud-worker" "$B/daemon-san/tests/test_cuda_backend" \
	"$B/daemon-san/tests/test_core_hang" >"$OUT/build.log" 2>&1 || {
	tail -30 "$OUT/build.log"; say "FAIL build"; exit 1; }
export MDGPUD_WORKER="$B/mdgpud-worker"

say "== 0. machine"
{
	echo "date: $(date -u +%FT%TZ)"
	echo "gpu: $(nvidia-smi --query-gpu=name,driver_version \
		--format=csv,noheader 2>/dev/null)"
	echo "kernel: $(uname -r)"
	echo "id: $(id)"
	grep -E '^(Cap(Eff|Bnd)|Seccomp|NoNewPrivs):' /proc/self/status
	echo "seccomp actions: $(cat /proc/sys/kernel/seccomp/actions_avail 2>&1)"
	echo "fs.suid_dumpable: $(cat /proc/sys/fs/suid_dumpable 2>&1)"
	echo "yama ptrace_scope: $(cat /proc/sys/kernel/yama/ptrace_scope 2>&1)"
	if unshare -m true 2>/dev/null; then
		echo "unshare -m: works"
	else
		echo "unshare -m: FAILS (no mount namespace: worker_sandbox = best-effort needed)"
	fi
	if unshare -n true 2>/dev/null; then
		echo "unshare -n: works"
	else
		echo "unshare -n: FAILS (no network namespace: worker_net = host or best-effort needed)"
	fi
	echo "LD_LIBRARY_PATH under /tmp (bound read-only into the private /tmp): $(echo "${LD_LIBRARY_PATH:-}" | tr ':' '\n' | grep -c '^/tmp/')"
	echo "device nodes (the worker uid must be able to open them):"
	ls -la /dev/nvidia* 2>&1
	echo "/dev/nvidia-caps: $(find /dev/nvidia-caps -mindepth 1 2>&1 | tr "\n" " ")"
	echo "strace: $(command -v strace || echo absent)"
} 2>&1 | tee -a "$SUM"

# run NAME TIMEOUT ENV... -- BINARY: one pass, logged to $OUT/NAME.log.
run() {
	local name=$1 limit=$2 rc
	shift 2
	local envs=()
	while [ "$1" != "--" ]; do envs+=("$1"); shift; done
	shift
	echo "== $name: ${envs[*]} $*" >"$OUT/$name.log"
	env "${envs[@]}" timeout -k 5 "$limit" "$@" >>"$OUT/$name.log" 2>&1
	rc=$?
	if [ $rc -eq 0 ]; then say "PASS $name"; else say "FAIL $name (exit $rc)"; fi
	grep -E '^\[  (FAILED|SKIPPED) \]|sandbox|lost' "$OUT/$name.log" |
		sort | uniq -c | head -20 | sed 's/^/    /' | tee -a "$SUM"
	return $rc
}
# Syscall names the reporter printed in a log ("seccomp-learn: NAME (NR)").
names() {
	sed -n 's/.*seccomp-learn: \([a-z0-9_]*\) (\([0-9]*\)).*/\1/p' "$1" |
		sort -u
}

say "== 1. audit: every syscall of the workers (slow; failures expected)"
run audit 600 MDGPUD_TEST_SANDBOX=best-effort MDGPUD_TEST_SECCOMP=audit \
	-- "$B/daemon-san/tests/test_cuda_backend"
names "$OUT/audit.log" >"$OUT/sandbox-audit-syscalls.txt"
say "    driver + worker syscalls ($(wc -l <"$OUT/sandbox-audit-syscalls.txt")): $(tr '\n' ' ' <"$OUT/sandbox-audit-syscalls.txt")"
# First use with its arguments, for the argument rules (ioctl, socket, clone).
grep 'seccomp-learn:' "$OUT/audit.log" | sed 's/^mdgpud-worker [0-9]*: //' |
	sort -u -k2,2 >"$OUT/sandbox-audit-first-use.txt"

say "== 2. learn: syscalls outside the allowlist"
run learn 300 MDGPUD_TEST_SANDBOX=required MDGPUD_TEST_SECCOMP=learn \
	-- "$B/daemon-san/tests/test_cuda_backend"
names "$OUT/learn.log" >"$OUT/sandbox-missing-syscalls.txt"
missing=$(tr '\n' ',' <"$OUT/sandbox-missing-syscalls.txt" | sed 's/,$//')
if [ -z "$missing" ]; then
	say "    allowlist covers the driver: nothing reported"
else
	say "    MISSING from the allowlist: $missing"
	grep 'seccomp-learn:' "$OUT/learn.log" | sed 's/^/    /' | tee -a "$SUM"
fi

say "== 3. enforce: the sandbox as production runs it"
status=0
run enforce-cuda-backend 300 MDGPUD_TEST_SANDBOX=required \
	-- "$B/daemon-san/tests/test_cuda_backend" || status=1
run enforce-core-hang 120 MDGPUD_TEST_REAL_CUDA=1 \
	-- "$B/daemon-san/tests/test_core_hang" || status=1
# The two namespaces one at a time: which one the driver objects to.
run enforce-net-host 300 MDGPUD_TEST_SANDBOX=required MDGPUD_TEST_NET=host \
	-- "$B/daemon-san/tests/test_cuda_backend"
run enforce-tmp-shared 300 MDGPUD_TEST_SANDBOX=required MDGPUD_TEST_TMP=shared \
	-- "$B/daemon-san/tests/test_cuda_backend"
if [ $status -ne 0 ] && [ -n "$missing" ]; then
	say "    again with worker_seccomp_allow = $missing"
	run enforce-with-missing 300 MDGPUD_TEST_SANDBOX=required \
		MDGPUD_TEST_SECCOMP_ALLOW="$missing" \
		-- "$B/daemon-san/tests/test_cuda_backend"
fi
say "== 4. off: the same tests without the sandbox"
run off-cuda-backend 300 MDGPUD_TEST_SANDBOX=off \
	-- "$B/daemon-san/tests/test_cuda_backend"

say "== kernel log: seccomp kills (audit type=1326), if readable"
(dmesg 2>/dev/null | grep -E 'type=1326|seccomp' | tail -20 || true) |
	sed 's/^/    /' | tee -a "$SUM"
say "== sandbox-on-gpu.sh: enforce exit $status; logs in $OUT"
exit $status
