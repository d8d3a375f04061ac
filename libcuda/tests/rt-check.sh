#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR MIT
# What one run of rt_basic (libcuda/tests/rt_basic.cu, NVIDIA's runtime,
# unmodified) must print on mdgpu's libcuda.so.1 over a vGPU of the sim
# backend, read from its output (stdout and stderr in order, run with
# MDGPU_CUDA_LOG=1 and the arguments QUOTA --no-code).  Run by
# run-rt-tests.sh (socket transport) and by the nested e2e's inner guest
# (tests/e2e/nested-inner-init, guest transport, busybox): one awk pass,
# because every process costs about a third of a second there.
#
#   rt-check.sh MODE OUT NAME TRANSPORT QUOTA RC
#
# MODE lazy (CUDA_MODULE_LOADING unset):
#   every step passes but the kernel's: the export tables are served, the
#   integrity check passes, device query, allocations, copies and memsets
#   (contents checked), cudaMemGetInfo = the quota, events, streams,
#   cudaGetLastError; the program's library is loaded only at its
#   kernel's look-up (logged after the last other step, never at
#   cuLibraryLoadData), which the sim backend refuses (it loads no code),
#   so the launch fails with cudaErrorNotSupported (801) and leaves the
#   kernel's buffer unchanged (rt_basic --no-code); exit status 0.
# MODE eager (CUDA_MODULE_LOADING=EAGER):
#   the runtime loads its fatbin at its first call, which the sim refuses,
#   so that call fails 801; exit status 1.
# With MDGPU_TEST_BACKEND=cuda the vGPU is the cuda backend's over CI's
# fake libcuda.so.1, which loads only its own named test kernels: the
# runtime's cubin is refused as malformed (-22, cudaErrorInvalidKernelImage
# 200) where the sim refuses every image (-95, 801).
# OUT is the output file, NAME names the run in messages, TRANSPORT the
# transport cuInit must log, QUOTA the vGPU's quota in bytes, RC the exit
# status of the run.  Prints one "FAIL: NAME: ..." line per failed check;
# exits 0 when every check passed, else 1.
set -u
[ $# -eq 6 ] && { [ "$1" = lazy ] || [ "$1" = eager ]; } || {
	echo "usage: rt-check.sh lazy|eager OUT NAME TRANSPORT QUOTA RC" >&2
	exit 2
}
awk -v mode="$1" -v name="$3" -v transport="$4" -v quota="$5" -v rc="$6" \
	-v backend="${MDGPU_TEST_BACKEND:-sim}" '
function need(re) { want[++nwant] = re }
function bad(re, why) { ban[++nban] = re; banwhy[nban] = why }
function fail(why) { print "FAIL: " name ": " why; fails++ }
BEGIN {
	L = "^libcuda\\(mdgpu\\): "
	# The refused image: why, its kind and size, the code of the host driver.
	image = "module_load: not supported by this backend or transport " \
		"\\(-95\\); the image was ELF or fatbin, [0-9]+ bytes; the " \
		"host driver.s code 0$"
	code_err = 801
	if (backend == "cuda") {
		image = "the host driver refused the ELF or fatbin image of " \
			"[0-9]+ bytes: CUDA_ERROR_INVALID_IMAGE \\(200\\)$"
		code_err = 200
	}
	if (mode == "lazy") {
		need(L "cuInit: vGPU [0-9]+ over the " transport \
		     " transport, quota " quota " bytes")
		need(L "cuGetExportTable\\(f8cff951-2146-8b4e-b9e2-fb469e7c0dd9\\): not found$")
		n = split("CUDART_INTERFACE TOOLS_RUNTIME_CALLBACK_HOOKS " \
			  "TOOLS_TLS CONTEXT_LOCAL_STORAGE CONTEXT_CHECKS " \
			  "INTEGRITY_CHECK", t, " ")
		for (i = 1; i <= n; i++)
			need(L "cuGetExportTable\\(" t[i] "\\) = ")
		n = split("cudaGetDeviceCount cudaGetDeviceProperties " \
			  "cudaMalloc cudaMemGetInfo cudaMemcpy cudaMemset " \
			  "events streams host_functions cudaGetLastError " \
			  "launch", t, " ")
		for (i = 1; i <= n; i++)
			need("^rt_basic: ok " t[i] "$")
		need("^rt_basic: launch error " code_err " ")
		need("^rt_basic: all passed$")
		need(L "cuLibraryGetKernel: " image)
		bad("integrity checks failed",
		    "the runtime'"'"'s integrity check failed")
		bad("not supported \\(its private tables",
		    "runtime version refused")
		bad(L "cuLibraryLoadData: loading",
		    "cuLibraryLoadData loaded its library (lazy mode)")
		rc_want = 0
	} else {
		need("^rt_basic: FAIL cudaGetDeviceCount: .* = " code_err " ")
		need(L "cuLibraryLoadData: " nocode)
		need(L "cuLibraryLoadData: " image)
		rc_want = 1
	}
}
{
	for (i = 1; i <= nwant; i++)
		if (!got[i] && $0 ~ want[i])
			got[i] = NR
	for (i = 1; i <= nban; i++)
		if (!hit[i] && $0 ~ ban[i])
			hit[i] = NR
	if (!load && $0 ~ L "cuLibraryGetKernel: loading library ")
		load = NR
	if (!before && $0 == "rt_basic: ok cudaGetLastError")
		before = NR
}
END {
	for (i = 1; i <= nwant; i++)
		if (!got[i])
			fail("no line matching /" want[i] "/")
	for (i = 1; i <= nban; i++)
		if (hit[i])
			fail(banwhy[i] " (line " hit[i] ")")
	if (mode == "lazy" && !(load > before))
		fail("library loaded at line " load + 0 \
		     ", not after the last step before the launch (line " \
		     before + 0 ")")
	if (rc != rc_want)
		fail("exit status " rc ", expected " rc_want)
	exit fails > 0
}' "$2"
