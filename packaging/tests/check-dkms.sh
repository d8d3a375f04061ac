#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# check-dkms.sh [SOURCETREE]: build mdgpu.ko and mdgpu-guest.ko through
# dkms (add, build) for every Debian 6.1 and 6.12 header set in /usr/src,
# from SOURCETREE/mdgpu-<VERSION>/ and SOURCETREE/mdgpu-guest-<VERSION>/
# (what the -dkms packages install), or, without an argument, from a
# `make install-dkms install-guest` into a temporary DESTDIR.
#
# Nothing of this machine's DKMS state is touched: --dkmstree and
# --sourcetree point into build/dkms-check/, and the module signing key
# dkms would create in /var/lib/dkms is made there too (mok_signing_key,
# mok_certificate).  Each module must exist afterwards with
# MODULE_VERSION = VERSION and the header set's vermagic.  The
# BUILD_EXCLUSIVE_KERNEL pattern of both dkms.conf is checked against
# releases it must accept and refuse.
set -euo pipefail
: "${BUILD:?}" "${VERSION:?}" "${MAKE:=make}"
top=$(cd "$(dirname "$0")/../.." && pwd)
t="$BUILD/dkms-check"
rm -rf "$t"
mkdir -p "$t/tree"
pass=0
ok() { pass=$((pass + 1)); echo "   ok: $*"; }
fail() { echo "check-dkms: FAIL: $*" >&2; exit 1; }

command -v dkms >/dev/null || fail "dkms not installed (scripts/install-deps.sh)"
src=${1:-}
if [ -z "$src" ]; then
	# shellcheck disable=SC2086 # MAKE may hold options
	$MAKE -s --no-print-directory -C "$top" BUILD="$BUILD" \
		MDGPU_VERSION="$VERSION" \
		DESTDIR="$t/root" install-dkms install-guest >/dev/null
	src="$t/root/usr/src"
fi
shopt -s nullglob
hdrs=(/usr/src/linux-headers-6.1.*-amd64 /usr/src/linux-headers-6.12.*-amd64)
[ ${#hdrs[@]} -ge 2 ] || fail "need Debian's 6.1 and 6.12 headers in /usr/src"

export mok_signing_key="$t/mok.key" mok_certificate="$t/mok.pub"
dk=(--dkmstree "$t/tree" --sourcetree "$src")

for mod in mdgpu mdgpu-guest; do
	conf="$src/$mod-$VERSION/dkms.conf"
	[ -f "$conf" ] || fail "$conf missing"
	re=$(sed -n 's/^BUILD_EXCLUSIVE_KERNEL="\(.*\)"$/\1/p' "$conf")
	for k in 6.1.0-56-amd64 6.12.117+deb12-amd64 6.19.0-1-amd64 7.0.0; do
		[[ $k =~ $re ]] || fail "$mod: BUILD_EXCLUSIVE_KERNEL refuses $k"
	done
	for k in 5.10.0-30-amd64 6.0.0-1-amd64 4.19.0-27-amd64; do
		[[ $k =~ $re ]] && fail "$mod: BUILD_EXCLUSIVE_KERNEL accepts $k"
	done
	ok "$mod: BUILD_EXCLUSIVE_KERNEL accepts 6.1+, refuses 6.0 and older"
	dkms add -m "$mod" -v "$VERSION" "${dk[@]}" >"$t/$mod-add.log" 2>&1 ||
		{ cat "$t/$mod-add.log"; fail "dkms add $mod"; }
	for h in "${hdrs[@]}"; do
		rel=${h#/usr/src/linux-headers-}
		log="$t/$mod-$rel.log"
		start=$(date +%s)
		nice dkms build -m "$mod" -v "$VERSION" -k "$rel" \
			--kernelsourcedir "$h" -j 2 "${dk[@]}" >"$log" 2>&1 ||
			{ cat "$log"; find "$t/tree" -name make.log -exec cat {} +;
			  fail "dkms build $mod for $rel"; }
		ko=$(find "$t/tree/$mod/$VERSION/$rel" -name "$mod.ko*" | head -1)
		[ -n "$ko" ] || fail "$mod.ko for $rel not found under $t/tree"
		case $ko in *.xz) xz -dkf "$ko"; ko=${ko%.xz} ;; esac
		v=$(modinfo -F version "$ko")
		[ "$v" = "$VERSION" ] || fail "$ko: version '$v', expected $VERSION"
		vm=$(modinfo -F vermagic "$ko")
		[ "${vm%% *}" = "$rel" ] || fail "$ko: vermagic '$vm' is not $rel"
		ok "$mod.ko for $rel: version $v, vermagic $rel ($(($(date +%s) - start)) s)"
	done
done
echo "check-dkms: $pass checks passed"
