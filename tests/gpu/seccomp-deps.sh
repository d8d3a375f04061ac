# shellcheck shell=sh
# SPDX-License-Identifier: GPL-2.0 OR MIT
# Sourced by the GPU scripts: mdgpud-worker links libseccomp statically
# (userspace-daemon/daemon.mk, W_LIBS).  Without /usr/include/seccomp.h,
# libseccomp-dev and libseccomp2 from .deps/seccomp/*.deb
# (tests/gpu/deb-deps.sh).
# shellcheck source=tests/gpu/deb-deps.sh
. "$TOP/tests/gpu/deb-deps.sh"
mdgpu_deb_deps seccomp seccomp.h libseccomp.a libseccomp-dev
