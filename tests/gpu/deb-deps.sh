# shellcheck shell=sh
# SPDX-License-Identifier: GPL-2.0 OR MIT
# Sourced by the GPU scripts (through tests/gpu/seccomp-deps.sh, and by
# run-on-gpu.sh and sandbox-on-gpu.sh for cmocka); POSIX sh, as
# bench/run-gpu.sh sources it too.  The caller sets TOP.
#
#   mdgpu_deb_deps NAME HEADER LIB WHAT [run]
#       Nothing if /usr/include/HEADER exists.  Else the .debs in
#       $TOP/.deps/NAME/ (on a Debian 12 machine: apt-get download of the
#       library and its -dev package) are unpacked into /tmp/mdgpu-NAME,
#       emptied first, never into /; its include directory goes on
#       C_INCLUDE_PATH (system headers: their warnings are not ours), the
#       directory of the first file named LIB (a find -name pattern) on
#       LIBRARY_PATH and, with run, on LD_LIBRARY_PATH too.  If HEADER is
#       not among them: "WHAT not installed and no .deps/NAME/*.deb" on
#       stderr and the script exits 2.
mdgpu_deb_deps() {
	[ -f "/usr/include/$2" ] && return 0
	dd_pfx=/tmp/mdgpu-$1
	rm -rf "$dd_pfx"
	mkdir -p "$dd_pfx"
	for deb in "$TOP/.deps/$1"/*.deb; do
		[ -f "$deb" ] && dpkg -x "$deb" "$dd_pfx"
	done
	if [ ! -f "$dd_pfx/usr/include/$2" ]; then
		echo "$4 not installed and no .deps/$1/*.deb" >&2
		exit 2
	fi
	dd_lib=$(dirname "$(find "$dd_pfx" -name "$3" | head -1)")
	export C_INCLUDE_PATH="$dd_pfx/usr/include${C_INCLUDE_PATH:+:$C_INCLUDE_PATH}"
	export LIBRARY_PATH="$dd_lib${LIBRARY_PATH:+:$LIBRARY_PATH}"
	if [ "${5:-}" = run ]; then
		export LD_LIBRARY_PATH="$dd_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
	fi
}
