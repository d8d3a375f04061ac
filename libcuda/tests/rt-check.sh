#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR MIT
# What one run of rt_basic (libcuda/tests/rt_basic.cu, NVIDIA's runtime,
# unmodified) must print on mdgpu's libcuda.so.1 over a vGPU of the sim
# backend, read from its output (stdout and stderr in order, run with
# MDGPU_CUDA_LOG=1 and the arguments QUOTA --no-code).  POSIX sh with
# busybox's tools: run by run-rt-tests.sh (socket transport) and by the
# nested e2e's inner guest (tests/e2e/nested-inner-init, guest transport).
#
#   rt-check.sh MODE OUT NAME TRANSPORT QUOTA RC
#
# MODE lazy (CUDA_MODULE_LOADING unset):
#   every step passes but the kernel's: the export tables are served, the
#   integrity check passes, device query, allocations, copies and memsets
#   (contents checked), cudaMemGetInfo = the quota, events, streams,
#   cudaGetLastError; the program's library is loaded only at its
#   kernel's look-up, which the sim backend refuses (it loads no code), so
#   the launch fails with cudaErrorNotSupported (801) and leaves the
#   kernel's buffer unchanged (rt_basic --no-code); exit status 0.
# MODE eager (CUDA_MODULE_LOADING=EAGER):
#   the runtime loads its fatbin at its first call, which the sim refuses,
#   so that call fails 801; exit status 1.
# OUT is the output file, NAME names the run in messages, TRANSPORT the
# transport cuInit must log, QUOTA the vGPU's quota in bytes, RC the exit
# status of the run.  Prints one "FAIL: NAME: ..." line per failed check;
# exits 0 when every check passed, else 1.
set -u
mode=$1 out=$2 name=$3 transport=$4 quota=$5 rc=$6
STEPS='cudaGetDeviceCount cudaGetDeviceProperties cudaMalloc cudaMemGetInfo
cudaMemcpy cudaMemset events streams cudaGetLastError launch'
NO_CODE='module_load: not supported by this backend or transport (-95)'
fails=0

fail() { echo "FAIL: $name: $*"; fails=$((fails + 1)); }
# has LINE-REGEX: the output has such a line.
has() { grep -q -- "$1" "$out" || fail "no line '$1'"; }
# line REGEX: the number of the first line that matches, or 0.
line() { grep -n -m1 -- "$1" "$out" | cut -d: -f1 | grep . || echo 0; }

case $mode in
lazy)
	has "^libcuda(mdgpu): cuInit: vGPU [0-9]* over the $transport transport, quota $quota bytes"
	has '^libcuda(mdgpu): cuGetExportTable(f8cff951-2146-8b4e-b9e2-fb469e7c0dd9): not found$'
	for t in CUDART_INTERFACE TOOLS_RUNTIME_CALLBACK_HOOKS TOOLS_TLS \
		 CONTEXT_LOCAL_STORAGE CONTEXT_CHECKS INTEGRITY_CHECK; do
		has "^libcuda(mdgpu): cuGetExportTable($t) = "
	done
	! grep -q 'integrity checks failed' "$out" ||
		fail "the runtime's integrity check failed"
	! grep -q 'not supported (its private tables' "$out" ||
		fail "runtime version refused"
	for s in $STEPS; do
		has "^rt_basic: ok $s\$"
	done
	has '^rt_basic: launch error 801 '
	has '^rt_basic: all passed$'
	[ "$rc" = 0 ] || fail "exit status $rc"
	# Lazy: nothing loaded before the kernel is looked up, at its launch.
	has "^libcuda(mdgpu): cuLibraryGetKernel: $NO_CODE\$"
	! grep -q '^libcuda(mdgpu): cuLibraryLoadData: loading' "$out" ||
		fail "cuLibraryLoadData loaded its library (lazy mode)"
	load=$(line '^libcuda(mdgpu): cuLibraryGetKernel: loading library ')
	before=$(line '^rt_basic: ok cudaGetLastError$')
	[ "$load" -gt "$before" ] ||
		fail "library loaded at line $load, before the launch step (line $before)"
	;;
eager)
	has '^rt_basic: FAIL cudaGetDeviceCount: .* = 801 '
	has "^libcuda(mdgpu): cuLibraryLoadData: $NO_CODE\$"
	[ "$rc" = 1 ] || fail "exit status $rc, expected 1"
	;;
*)
	echo "usage: rt-check.sh lazy|eager OUT NAME TRANSPORT QUOTA RC" >&2
	exit 2 ;;
esac
[ "$fails" = 0 ]
