# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# Sourced by the GPU scripts: mdgpud-worker links libseccomp statically
# (userspace-daemon/daemon.mk, W_LIBS).  If the machine lacks
# /usr/include/seccomp.h, the .debs in .deps/seccomp/ (on a Debian 12
# machine: apt-get download libseccomp-dev libseccomp2) are unpacked into
# a private prefix, never into /, and put on C_INCLUDE_PATH (system headers: their warnings are not ours) and LIBRARY_PATH.
if [ ! -f /usr/include/seccomp.h ]; then
	sc_pfx=/tmp/mdgpu-seccomp
	rm -rf "$sc_pfx"
	mkdir -p "$sc_pfx"
	for deb in "$TOP"/.deps/seccomp/*.deb; do
		[ -f "$deb" ] && dpkg -x "$deb" "$sc_pfx"
	done
	if [ ! -f "$sc_pfx/usr/include/seccomp.h" ]; then
		echo "libseccomp-dev not installed and no .deps/seccomp/*.deb" >&2
		exit 2
	fi
	sc_lib=$(dirname "$(find "$sc_pfx" -name 'libseccomp.a' | head -1)")
	export C_INCLUDE_PATH="$sc_pfx/usr/include${C_INCLUDE_PATH:+:$C_INCLUDE_PATH}"
	export LIBRARY_PATH="$sc_lib${LIBRARY_PATH:+:$LIBRARY_PATH}"
fi
