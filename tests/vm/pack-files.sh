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

# pack_libvirt_cpio OUT FILE...
#   A cpio archive OUT of Debian's libvirtd and virsh with each FILE
#   (connection drivers, helpers, data files; each at its own path) and
#   the libraries ldd names for them.  Built again only when dpkg's
#   database is newer than OUT (a package installed or upgraded) or the
#   list of FILEs changed (OUT.files holds the list it was built from).
#   Placed before an image, so that the image's own copies of shared
#   libraries are the ones unpacked last.
pack_libvirt_cpio() {
	local out=$1 st f
	shift
	if [ -s "$out" ] && [ ! /var/lib/dpkg/status -nt "$out" ] &&
	   [ "$(cat "$out.files" 2>/dev/null)" = "$*" ]; then
		return 0
	fi
	st=$(mktemp -d "${TMPDIR:-/tmp}/mdgpu-libvirt.XXXXXX")
	# shellcheck disable=SC2046  # packed paths hold no blanks
	pack_files "$st" /usr/sbin/libvirtd=/usr/sbin/libvirtd \
		/usr/bin/virsh=/usr/bin/virsh $(for f; do echo "$f=$f"; done)
	(cd "$st" && find . | LC_ALL=C sort | cpio -o -H newc --quiet) >"$out.$$"
	rm -rf "$st"
	mv -f "$out.$$" "$out"
	echo "$*" >"$out.files"
}
