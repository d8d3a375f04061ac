#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# cuda-trace: runs PROGRAM with tools/cuda-trace's libcuda.so.1 in front
# of the real one, which logs what the program asks of the driver
# (tools/cuda-trace/README.md: the PROXY_* variables and the output).
#   tools/cuda-trace/run.sh [--real PATH] PROGRAM [ARGS...]
# --real PATH (or PROXY_REAL): the libcuda.so.1 to trace, NVIDIA's or
#   mdgpu's build/libcuda/libcuda.so.1; default: the libcuda.so.1 ldconfig
#   knows (NVIDIA's).
# PROXY_BUILD: the build directory (default: the tree's build/); the
#   library is (re)built there with make, its log in
#   $PROXY_BUILD/cuda-trace/build.log.
# The log goes to the program's stderr.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
B=${PROXY_BUILD:-$top/build}
real=${PROXY_REAL:-}

die() { echo "cuda-trace: $*" >&2; exit 2; }
usage() {
	sed -n 's/^#   //p' "$0" | head -1 >&2
	exit 2
}
while [ $# -gt 0 ]; do
	case $1 in
	--real) [ $# -ge 2 ] || usage; real=$2; shift 2 ;;
	--real=*) real=${1#--real=}; shift ;;
	-h | --help) usage ;;
	--) shift; break ;;
	*) break ;;
	esac
done
[ $# -ge 1 ] || usage
if [ -z "$real" ]; then
	real=$(ldconfig -p | awk '/libcuda\.so\.1 /{print $NF; exit}')
	[ -n "$real" ] || die "ldconfig knows no libcuda.so.1: give --real PATH"
fi
[ -f "$real" ] || die "$real: no such file"
real=$(readlink -f "$real")

lib=$B/cuda-trace/libcuda.so.1
[ "$real" != "$(readlink -f "$lib")" ] || die "--real is cuda-trace itself"
inc=/usr/local/cuda/include
[ -f "$inc/cuda.h" ] || inc=/usr/local/cuda/targets/x86_64-linux/include
mkdir -p "$B/cuda-trace"
if ! make -C "$top" BUILD="$B" CUDA_INC="$inc" "$lib" \
	>"$B/cuda-trace/build.log" 2>&1; then
	tail -20 "$B/cuda-trace/build.log" >&2
	die "build failed ($B/cuda-trace/build.log)"
fi
exec env PROXY_REAL="$real" \
	LD_LIBRARY_PATH="$B/cuda-trace${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$@"
