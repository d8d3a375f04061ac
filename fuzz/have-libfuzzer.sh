#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR MIT
# Usage: have-libfuzzer.sh CC
# Exit 0 when CC links a -fsanitize=fuzzer,address,undefined program; else
# print why the fuzz runs are skipped and exit 1.
set -u
cc=${1:-clang}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
if ! command -v "$cc" >/dev/null 2>&1; then
	echo "fuzz: SKIPPED: $cc not found (Debian: apt-get install clang-14 libclang-rt-14-dev)"
	exit 1
fi
cat >"$tmp/t.c" <<'C'
#include <stddef.h>
#include <stdint.h>
int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);
int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	return n && d[0] == 0xff;
}
C
if ! "$cc" -fsanitize=fuzzer,address,undefined "$tmp/t.c" -o "$tmp/t" \
		>"$tmp/log" 2>&1; then
	echo "fuzz: SKIPPED: $cc cannot link -fsanitize=fuzzer (Debian: apt-get install libclang-rt-14-dev):"
	sed 's/^/  /' "$tmp/log" | head -5
	exit 1
fi
exit 0
