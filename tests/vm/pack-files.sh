# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# tests/vm/pack-files.sh: sourced by the initramfs builders
# (tests/vm/mkinitramfs.sh, tests/nested/mkinitramfs-nested.sh) to carry
# dynamic programs into a guest image.
#
# pack_libs ROOT FILE...
#   Copies the shared libraries and the dynamic loader that ldd names for
#   each FILE to the same paths under ROOT (symlinks resolved).  A static
#   program names none (ldd says "not a dynamic executable").
# pack_files ROOT SRC=DEST...
#   Copies each SRC to DEST (an absolute path in the image) under ROOT,
#   then pack_libs for those that are ELF files (scripts need no
#   libraries).  A SRC that does not exist is named on stderr and left
#   out: the checks that use it then fail.

pack_libs() {
	local root=$1 f lib
	shift
	for lib in $(for f; do ldd "$f" 2>/dev/null; done | grep -o '/[^ ]*' | sort -u); do
		mkdir -p "$root$(dirname "$lib")"
		cp -L "$lib" "$root$lib"
	done
}

pack_files() {
	local root=$1 fp src dst
	local elf=()
	shift
	for fp; do
		src=${fp%%=*} dst=${fp#*=}
		if [ ! -f "$src" ]; then
			echo "pack: $src not built; its tests will fail" >&2
			continue
		fi
		mkdir -p "$root$(dirname "$dst")"
		cp -L "$src" "$root$dst"
		[ "$(head -c 4 "$src" | tail -c 3)" != ELF ] || elf+=("$src")
	done
	[ ${#elf[@]} -eq 0 ] || pack_libs "$root" "${elf[@]}"
}
