# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# Sourced by the GPU scripts that build cmocka tests
# (tests/gpu/run-on-gpu.sh, tests/gpu/sandbox-on-gpu.sh).  If the machine
# lacks /usr/include/cmocka.h, the .debs in .deps/cmocka/ (on a Debian 12
# machine: apt-get download libcmocka0 libcmocka-dev) are unpacked into a
# private prefix, never into /, and put on C_INCLUDE_PATH, LIBRARY_PATH
# and LD_LIBRARY_PATH (the tests load libcmocka.so at run time).
if [ ! -f /usr/include/cmocka.h ]; then
	pfx=/tmp/mdgpu-cmocka
	rm -rf "$pfx"
	mkdir -p "$pfx"
	for deb in "$TOP"/.deps/cmocka/*.deb; do
		[ -f "$deb" ] && dpkg -x "$deb" "$pfx"
	done
	if [ ! -f "$pfx/usr/include/cmocka.h" ]; then
		echo "cmocka not installed and no .deps/cmocka/*.deb" >&2
		exit 2
	fi
	libdir=$(dirname "$(find "$pfx" -name 'libcmocka.so*' | head -1)")
	export C_INCLUDE_PATH="$pfx/usr/include${C_INCLUDE_PATH:+:$C_INCLUDE_PATH}"
	export LIBRARY_PATH="$libdir${LIBRARY_PATH:+:$LIBRARY_PATH}"
	export LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
