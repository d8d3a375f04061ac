#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# scripts/build-debug-kernel.sh: build the debug kernel of `make
# check-vm-debug` (Documentation/testing-vm.md, "Debug kernel").
#
# Debian's linux-source-6.12, configured as `make tinyconfig` plus
# scripts/debug-kernel.config (KASAN generic inline, lockdep, atomic-sleep
# checks, kmemleak, list debugging, and what the TCG guests need), built
# out of tree.  The result is laid out like an unpacked linux-image package,
# so that the guest scripts take it in the place of Debian's kernel
# (VM_KROOT, tests/vm/fetch-kernel.sh):
#
#   $DEBUG_KERNEL_DIR/obj                     kernel build tree (KDIR for
#                                             out-of-tree modules)
#   $DEBUG_KERNEL_DIR/root/boot/vmlinuz-REL   the kernel
#   $DEBUG_KERNEL_DIR/root/lib/modules/REL    its modules, modules.dep
#
# REL is in obj/include/config/kernel.release (6.12.N-mdgpu-debug).
# DEBUG_KERNEL_DIR defaults to <repo>/.cache/debug-kernel (kept by `make
# clean`).  A second run with the same source package, fragment and script
# returns at once; a change to any of them rebuilds (incrementally).
#
# Packages: not part of CI, so not in scripts/debian-packages.txt; this
# script installs what it lacks of DEBUG_KERNEL_PKGS below with apt-get
# (as root, or through sudo).
#
# Environment: DEBUG_KERNEL_DIR, DEBUG_KERNEL_JOBS (default: nproc).
set -eu

say() { echo "debug-kernel: $*" >&2; }

# One function, read whole before it runs: editing or updating this file
# during a long build does not change the running build.
main() {
	here=$(cd "$(dirname "$0")" && pwd)
	self=$here/$(basename "$0")
	top=$(cd "$here/.." && pwd)
	dir=${DEBUG_KERNEL_DIR:-$top/.cache/debug-kernel}
	jobs=${DEBUG_KERNEL_JOBS:-$(nproc)}
	frag=$here/debug-kernel.config
	tarball=/usr/src/linux-source-6.12.tar.xz
	# The kernel source and what building it needs beyond build-essential.
	local DEBUG_KERNEL_PKGS="linux-source-6.12 bc bison flex libelf-dev libssl-dev cpio kmod"

	missing=
	for p in $DEBUG_KERNEL_PKGS; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
			missing="$missing $p"
	done
	if [ -n "$missing" ]; then
		say "installing$missing"
		SUDO=
		[ "$(id -u)" -eq 0 ] || SUDO=sudo
		export DEBIAN_FRONTEND=noninteractive
		$SUDO apt-get update -q
		# shellcheck disable=SC2086
		$SUDO apt-get install -y -q --no-install-recommends $missing
	fi

	# What the result depends on: the source package version, the fragment
	# and this script.
	srcver=$(dpkg-query -W -f='${Version}' linux-source-6.12)
	key=$(cat "$frag" "$self" | sha256sum | cut -d' ' -f1)-$srcver
	mkdir -p "$dir"
	exec 9>"$dir/.lock"
	flock 9
	if [ "$(cat "$dir/root/.stamp" 2>/dev/null)" = "$key" ]; then
		say "up to date: $(cat "$dir/obj/include/config/kernel.release") in $dir"
		exit 0
	fi

	t0=$(date +%s)
	src=$dir/linux-source-6.12
	if [ "$(cat "$src/.stamp" 2>/dev/null)" != "$srcver" ]; then
		say "unpacking $tarball ($srcver)"
		rm -rf "$src"
		tar -C "$dir" -xJf "$tarball"
		echo "$srcver" >"$src/.stamp"
	fi

	obj=$dir/obj
	mkdir -p "$obj"
	kmake() { make -C "$src" O="$obj" ARCH=x86_64 -j"$jobs" "$@"; }
	say "configuring: tinyconfig + ${frag#"$top"/}"
	# Rewriting .config keeps the build incremental: Kbuild rebuilds what
	# depends on the options that changed (include/config/), not on .config.
	kmake -s tinyconfig
	(cd "$src" && ARCH=x86_64 scripts/kconfig/merge_config.sh -m -O "$obj" \
		"$obj/.config" "$frag" >/dev/null)
	kmake -s olddefconfig
	# merge_config.sh only warns when Kconfig drops a requested value.
	bad=0
	while IFS= read -r line; do
		case $line in
		CONFIG_*=*) ;;
		"# CONFIG_"*" is not set") ;;
		*) continue ;;
		esac
		grep -qxF "$line" "$obj/.config" || {
			sym=$(grep -o 'CONFIG_[A-Za-z0-9_]*' <<<"$line" | head -n1)
			say "requested '$line', .config has:" \
				"'$(grep -E "^(# )?${sym}[= ]" "$obj/.config" || echo nothing)'"
			bad=1
		}
	done <"$frag"
	[ "$bad" -eq 0 ] || { say "configuration does not hold every requested option"; exit 1; }

	say "building with -j$jobs (log $dir/build.log)"
	kmake bzImage modules >"$dir/build.log" 2>&1 || {
		tail -n 40 "$dir/build.log" >&2
		say "build FAILED (see $dir/build.log)"
		exit 1
	}
	rel=$(cat "$obj/include/config/kernel.release")
	root=$dir/root
	rm -rf "$root"
	mkdir -p "$root/boot"
	kmake -s INSTALL_MOD_PATH="$root" modules_install >>"$dir/build.log" 2>&1
	cp "$obj/arch/x86/boot/bzImage" "$root/boot/vmlinuz-$rel"
	depmod -b "$root" "$rel"
	echo "$key" >"$root/.stamp"
	say "built $rel in $(( $(date +%s) - t0 )) s: $root/boot/vmlinuz-$rel, KDIR $obj"
}

main "$@"
