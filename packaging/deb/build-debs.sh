#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR MIT
# build-debs.sh OUTDIR: Debian packages of this tree with dpkg-deb
# (Documentation/install.md, "Debian packages").  Called by `make deb`
# with BUILD, MAKE and VERSION set; everything is built already.
#
# Each package is staged with the matching install target (PREFIX=/usr,
# Debian's multiarch libdir), gets control from packaging/deb/<pkg>/
# (@VERSION@, @ARCH@, @SIZE@, @MAINTAINER@, @SHLIBS@ filled in, the last
# from dpkg-shlibdeps),
# its maintainer scripts and md5sums, and is built with
# dpkg-deb --root-owner-group (files owned by root without fakeroot).
set -eu
out=${1:?usage: build-debs.sh OUTDIR}
: "${BUILD:?}" "${MAKE:?}" "${VERSION:?}"
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
arch=$(dpkg --print-architecture)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null)
work="$BUILD/deb-work"
# No address is made up: set DEB_MAINTAINER to publish packages.
maintainer=${DEB_MAINTAINER:-The mdgpu authors <mdgpu@invalid>}

rm -rf "$work" "$out"
mkdir -p "$work/debian" "$out"

# pkg install-targets...: stage one package under $work/debian/<pkg>.
stage() {
	pkg=$1
	shift
	# shellcheck disable=SC2086 # MAKE may hold options
	$MAKE -s --no-print-directory -C "$top" BUILD="$BUILD" \
		MDGPU_VERSION="$VERSION" \
		DESTDIR="$work/debian/$pkg" PREFIX=/usr \
		LIBDIR="/usr/lib/$multiarch" DOCDIR="/usr/share/doc/$pkg" \
		SYSTEMDUNITDIR=/usr/lib/systemd/system "$@" >/dev/null
	mkdir -p "$work/debian/$pkg/usr/share/doc/$pkg"
	cp "$here/copyright" "$work/debian/$pkg/usr/share/doc/$pkg/copyright"
}

# pkg: control files, then the .deb.
finish() {
	pkg=$1
	root="$work/debian/$pkg"
	mkdir -p "$root/DEBIAN"
	shlibs=
	elves=$({ find "$root" -type f -perm -u+x -exec sh -c \
		'head -c 4 "$1" | grep -q ELF && echo "$1"' sh {} \; ;
		find "$root" -type f -name '*.so*'; } | sort -u)
	if [ -n "$elves" ]; then
		# shellcheck disable=SC2086 # one argument per file
		shlibs=$(cd "$work" && dpkg-shlibdeps -O $elves 2>/dev/null |
			sed -n 's/^shlibs:Depends=//p')
	fi
	size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
	sed -e "s|@VERSION@|$VERSION|g" -e "s|@ARCH@|$arch|g" \
		-e "s|@SHLIBS@|$shlibs|g" -e "s|@SIZE@|$size|g" \
		-e "s|@MAINTAINER@|$maintainer|g" \
		"$here/$pkg/control" >"$root/DEBIAN/control"
	for f in postinst prerm postrm conffiles; do
		[ -e "$here/$pkg/$f" ] || continue
		sed -e "s|@VERSION@|$VERSION|g" "$here/$pkg/$f" >"$root/DEBIAN/$f"
		[ "$f" = conffiles ] || chmod 0755 "$root/DEBIAN/$f"
	done
	(cd "$root" && find . -path ./DEBIAN -prune -o -type f -print |
		sed 's|^\./||' | LC_ALL=C sort | xargs -r md5sum) \
		>"$root/DEBIAN/md5sums"
	dpkg-deb --root-owner-group -Zxz --build "$root" \
		"$out/${pkg}_${VERSION}_$(sed -n 's/^Architecture: //p' \
		"$root/DEBIAN/control").deb" >/dev/null
}

printf 'Source: mdgpu\n\nPackage: mdgpud\nArchitecture: any\n' \
	>"$work/debian/control"
stage mdgpud install-daemon
stage libmdgpu-dev install-dev
stage mdgpu-libcuda install-libcuda
stage mdgpu-dkms install-dkms
stage mdgpu-guest-dkms install-guest
for pkg in mdgpud libmdgpu-dev mdgpu-libcuda mdgpu-dkms mdgpu-guest-dkms; do
	finish "$pkg"
done
ls "$out"
