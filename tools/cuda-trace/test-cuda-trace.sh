#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# cuda-trace in front of mdgpu's libcuda.so.1 (tools/cuda-trace/README.md):
# build/cuda-trace/trace-test, a fixed sequence of driver-API calls, run
# through tools/cuda-trace/run.sh --real build/libcuda/libcuda.so.1
# against an mdgpud on the sim backend.  Checks that the trace holds the
# calls in order with their results (refusals included), the values
# getters returned, the export-table log, the call counts, and that
# run.sh refuses to trace itself.  Prints "N passed, N failed".
#   BUILD=build tools/cuda-trace/test-cuda-trace.sh     (make check-cuda-trace)
set -u
cd "$(dirname "$0")/../.." || exit 2
TOP=$PWD
B=${BUILD:?}
TMP=$(mktemp -d /tmp/mdgpu-cuda-trace.XXXXXX)
OUT=$TMP
PASS=0
FAIL=0
# shellcheck source=tests/gpu/lib-daemon.sh
. "$TOP/tests/gpu/lib-daemon.sh"
cleanup() {
	mdgpu_daemon_stop
	rm -rf "$TMP"
}
trap cleanup EXIT

ok() { PASS=$((PASS + 1)); echo "ok   $*"; }
fail() { FAIL=$((FAIL + 1)); echo "FAIL $*"; }
# expect_line NAME FILE REGEX: some line of FILE matches REGEX (grep -E).
expect_line() {
	if grep -qE -- "$3" "$2"; then ok "$1"; else fail "$1: no line /$3/ in $2"; cat "$2"; fi
}

mdgpu_daemon_start "$TMP" -o backend=sim -o sim_realtime=0 \
	-o log_level=warn || exit 1

# trace NAME [VAR=value...]: trace-test traced, stdout and stderr kept.
trace() {
	local name=$1
	shift
	if env -u MDGPU_DEVICE -u MDGPU_VFIO -u PROXY_REAL -u PROXY_ERRORS \
		-u PROXY_TRACE -u PROXY_VALS -u PROXY_LOG_TABLE \
		MDGPU_SOCKET="$MDGPU_DAEMON_SOCK" MDGPU_TYPE=1g PROXY_BUILD="$B" \
		"$@" "$TOP/tools/cuda-trace/run.sh" --real "$B/libcuda/libcuda.so.1" \
		"$B/cuda-trace/trace-test" >"$TMP/$name.out" 2>"$TMP/$name.err"; then
		ok "$name: trace-test passed under the tracer"
	else
		fail "$name: trace-test failed"
		cat "$TMP/$name.out" "$TMP/$name.err"
	fi
}

# 1. PROXY_ERRORS + PROXY_TRACE: every call in order, as the native-vs-mdgpu
# diff recipe sees it (arguments stripped).
trace full PROXY_ERRORS=1 PROXY_TRACE=1 PROXY_LOG_TABLE=a094798c
grep -E '^\[(trc|err)\] ' "$TMP/full.err" | sed 's/(.*) = / = /' >"$TMP/full.calls"
cat >"$TMP/full.want" <<'WANT'
[trc] direct:cuInit = 0
[trc] direct:cuDeviceGet = 0
[trc] direct:cuDeviceGetAttribute = 0
[trc] direct:cuDevicePrimaryCtxRetain = 0
[trc] direct:cuCtxSetCurrent = 0
[trc] direct:cuMemAlloc_v2 = 0
[err] direct:cuMemAlloc_v2 = 2
[err] direct:cuMemAllocManaged = 801
[trc] cuMemFree@12000 = 0
[err] cuMemFree@12000 = 1
[trc] direct:cuDevicePrimaryCtxRelease_v2 = 0
WANT
if diff -u "$TMP/full.want" "$TMP/full.calls"; then
	ok "trace: 11 calls in order with their results"
else
	fail "trace: calls differ from the expected ones (diff above)"
fi
expect_line "trace: arguments" "$TMP/full.err" \
	'^\[err\] direct:cuMemAlloc_v2\(0x[0-9a-f]+, 0x10000000000\) = 2$'
expect_line "export table: unknown UUID refused" "$TMP/full.err" \
	'^\[proxy\] cuGetExportTable 0102030405060708090a0b0c0d0e0f10 = 500$'
expect_line "export table: hooks table found" "$TMP/full.err" \
	'^\[proxy\] cuGetExportTable a094798c2e742e7493f20800200c0a66 = 0$'
expect_line "export table: slots listed" "$TMP/full.err" \
	'^\[proxy\]   slot 6 = 0x[0-9a-f]+ .*/libcuda/libcuda\.so\.1\+0x'
expect_line "export table: slot call with its caller" "$TMP/full.err" \
	'^\[proxy\] Ta094798c\[6\]\(0x[0-9a-f]+, 0x[0-9a-f]+, .* from .*/trace-test\+0x[0-9a-f]+$'
expect_line "export table: memory before and after" "$TMP/full.err" \
	'^      pre/post \*a0 0/0x[0-9a-f]+ \*a1 0/0xe '

# 2. PROXY_ERRORS alone: the failing calls only.
trace errors PROXY_ERRORS=1
n=$(grep -c '^\[err\] ' "$TMP/errors.err")
t=$(grep -c '^\[trc\] ' "$TMP/errors.err")
if [ "$n" = 3 ] && [ "$t" = 0 ]; then ok "errors: 3 failing calls, no others"
else fail "errors: $n [err] and $t [trc] lines (want 3 and 0)"; fi

# 3. PROXY_VALS: what a getter wrote (132 SMs on the sim backend).
trace vals PROXY_ERRORS=1 PROXY_TRACE=1 PROXY_VALS=1
expect_line "vals: cuDeviceGetAttribute's value" "$TMP/vals.err" \
	'^\[trc\] direct:cuDeviceGetAttribute\(0x[0-9a-f]+, 0x10, 0\) = 0 \[\*a0 0x84\]$'

# 4. No variable: call counts at exit only.
trace counts
expect_line "counts: cuMemFree obtained by cuGetProcAddress" "$TMP/counts.err" \
	'^\[proxy\] +2 cuMemFree@12000$'
expect_line "counts: cuInit linked" "$TMP/counts.err" '^\[proxy\] +1 direct:cuInit$'
expect_line "counts: summary" "$TMP/counts.err" \
	'^\[proxy\] 9 of [0-9]+ obtained entry points were called$'
if grep -qE '^\[(trc|err)\] ' "$TMP/counts.err"; then
	fail "counts: call lines without PROXY_ERRORS"
else
	ok "counts: no call lines without PROXY_ERRORS"
fi

# 5. run.sh refuses the tracer as the real library.
if PROXY_BUILD="$B" "$TOP/tools/cuda-trace/run.sh" \
	--real "$B/cuda-trace/libcuda.so.1" true 2>"$TMP/self.err"; then
	fail "self: run.sh traced itself"
else
	expect_line "self: refused" "$TMP/self.err" 'is cuda-trace itself'
fi

echo "test-cuda-trace: $PASS passed, $FAIL failed"
[ "$FAIL" = 0 ]
