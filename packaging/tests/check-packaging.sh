#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# check-packaging.sh: `make check-packaging` (Documentation/install.md,
# "What the check verifies").  BUILD, MAKE, VERSION and TOP come from
# make; build/deb/ holds the five packages `make deb` built.
#
#  1. shellcheck of the scripts; every SPDX identifier in the tree has its
#     text in LICENSES/
#  2. packages: control fields, version, conffiles, the files each holds,
#     the shipped config's admin socket group and mode; the manual pages
#     and the bash completion (check-man.sh)
#  3. dpkg --root into an empty root (a dpkg database holding only the
#     packages they depend on), maintainer scripts run chrootless with
#     DPKG_ROOT set: all five "install ok installed", md5sums verified,
#     the group made by systemd-sysusers in that root (and kept by a
#     second configure), nothing built by DKMS (no dkms tree in the root)
#  4. the installed programs, run from that root: --help, --version;
#     mdgpud (sim backend) sends READY=1 to $NOTIFY_SOCKET only when its
#     admin socket answers, prefixes its lines "<N>" when stderr is
#     $JOURNAL_STREAM, answers daemon_version, refuses an unknown
#     admin_socket_group, makes its admin socket 0660 for the group it
#     names; mdgpu-spin verifies work
#     through it; a client built with the installed header, libmdgpu.a
#     and pkg-config file runs; the installed libcuda.so.1, found by
#     LD_LIBRARY_PATH, reaches the daemon; the installed layout finds
#     mdgpud-worker (and a lone copy of mdgpud does not);
#     mdgpud-instance passes PCI addresses on as cuda_device on a fake sysfs;
#     systemd-analyze verify accepts both units (the metrics one a
#     DynamicUser in group mdgpu); the installed manual pages
#     are the built ones, the completion parses and mdgpud's is a link
#  5. DKMS builds of both modules from the installed /usr/src for 6.1 and
#     6.12 (check-dkms.sh)
#  6. dpkg --purge of all five leaves no file of theirs in the root
#  7. make install / uninstall with DESTDIR and the default PREFIX
#
# Not verified here: a real systemd starting the unit, udev applying the
# rule, DKMS's postinst on a live system, module signing for Secure Boot.
set -euo pipefail
: "${BUILD:?}" "${VERSION:?}" "${TOP:?}" "${MAKE:=make}"
P="$TOP/packaging"
t="$BUILD/pkg-check"
root="$t/root"
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
pass=0
ok() { pass=$((pass + 1)); echo "   ok: $*"; }
fail() { echo "check-packaging: FAIL: $*" >&2; exit 1; }
step() { echo "== check-packaging: $*"; }
daemon_pid=
cleanup() { [ -z "$daemon_pid" ] || kill "$daemon_pid" 2>/dev/null || true; }
trap cleanup EXIT
rm -rf "$t"
mkdir -p "$t"
SECONDS=0

step "shellcheck, licenses"
(cd "$P" && shellcheck deb/build-debs.sh deb/*/postinst deb/*/prerm \
	deb/*/postrm tests/*.sh mdgpud-instance.in bash-completion/mdgpuctl.in \
	"$TOP/scripts/version.sh") || fail "shellcheck"
ok "shellcheck: packaging scripts, maintainer scripts, bash completion, scripts/version.sh"
# Identifiers: the words of each expression but its operators.
for id in $(git -C "$TOP" grep -h -o -E \
	'SPDX-License-Identifier: [()A-Za-z0-9.+ -]+' |
	sed 's/^SPDX-License-Identifier: //; s/[() ]/\n/g' |
	grep -E '^[A-Za-z][A-Za-z0-9.+-]*$' | grep -vx -e OR -e AND -e WITH |
	sort -u); do
	[ -s "$TOP/LICENSES/$id" ] || fail "SPDX '$id' has no LICENSES/$id"
	ok "SPDX $id: LICENSES/$id"
done

step "package contents"
shopt -s nullglob
debs=("$BUILD"/deb/*.deb)
[ ${#debs[@]} -eq 5 ] || fail "expected 5 packages in $BUILD/deb, found ${#debs[@]}"
declare -A want=(
	[mdgpud]="./usr/sbin/mdgpud ./usr/libexec/mdgpu/mdgpud
		./usr/libexec/mdgpu/mdgpud-worker ./usr/libexec/mdgpu/mdgpud-instance
		./usr/sbin/mdgpuctl ./usr/bin/mdgpu-spin ./etc/mdgpu/mdgpud.conf
		./usr/lib/systemd/system/mdgpud@.service
		./usr/lib/systemd/system/mdgpu-metrics@.service
		./usr/lib/sysusers.d/mdgpu.conf
		./usr/share/doc/mdgpud/copyright ./usr/share/doc/mdgpud/install.md
		./usr/share/doc/mdgpud/LICENSES/GPL-2.0
		./usr/share/man/man8/mdgpud.8.gz ./usr/share/man/man8/mdgpuctl.8.gz
		./usr/share/man/man5/mdgpud.conf.5.gz
		./usr/share/bash-completion/completions/mdgpuctl
		./usr/share/bash-completion/completions/mdgpud"
	[libmdgpu-dev]="./usr/lib/$multiarch/libmdgpu.a ./usr/include/mdgpu/mdgpu.h
		./usr/include/mdgpu/uapi/mdgpu.h ./usr/lib/$multiarch/pkgconfig/libmdgpu.pc"
	[mdgpu-libcuda]="./usr/lib/$multiarch/mdgpu/libcuda.so.1
		./usr/share/mdgpu/mdgpu-libcuda.conf"
	[mdgpu-dkms]="./usr/src/mdgpu-$VERSION/dkms.conf ./usr/src/mdgpu-$VERSION/Kbuild
		./usr/src/mdgpu-$VERSION/kmod/mdgpu_main.c
		./usr/src/mdgpu-$VERSION/kmod/mdgpu_version.h
		./usr/src/mdgpu-$VERSION/include/uapi/mdgpu.h
		./usr/src/mdgpu-$VERSION/mdev-types/mdgpu-types.def
		./usr/lib/modules-load.d/mdgpu.conf"
	[mdgpu-guest-dkms]="./usr/src/mdgpu-guest-$VERSION/dkms.conf
		./usr/src/mdgpu-guest-$VERSION/main.c
		./usr/src/mdgpu-guest-$VERSION/mdgpu_version.h
		./usr/src/mdgpu-guest-$VERSION/include/uapi/mdgpu-guest.h
		./usr/lib/udev/rules.d/60-mdgpu-guest.rules
		./usr/lib/sysusers.d/mdgpu-guest.conf"
)
for pkg in "${!want[@]}"; do
	deb=$(ls "$BUILD/deb/${pkg}_${VERSION}_"*.deb 2>/dev/null) ||
		fail "no ${pkg}_${VERSION} package"
	[ "$(dpkg-deb -f "$deb" Package)" = "$pkg" ] || fail "$deb: Package"
	[ "$(dpkg-deb -f "$deb" Version)" = "$VERSION" ] || fail "$deb: Version"
	dpkg-deb -c "$deb" | awk '{print $6}' >"$t/$pkg.list"
	for f in ${want[$pkg]}; do
		grep -qxF "$f" "$t/$pkg.list" || fail "$pkg lacks $f"
	done
	ok "$pkg: $(wc -l <"$t/$pkg.list") entries, the $(echo "${want[$pkg]}" | wc -w) expected files"
done
deb=$(ls "$BUILD"/deb/mdgpud_*.deb)
dpkg-deb -I "$deb" conffiles | grep -qx /etc/mdgpu/mdgpud.conf ||
	fail "mdgpud: /etc/mdgpu/mdgpud.conf is not a conffile"
dpkg-deb -f "$deb" Depends | grep -q '^libc6 (>= ' ||
	fail "mdgpud: Depends lacks libc6 (dpkg-shlibdeps)"
# The unit's ExecReload is /bin/kill, which procps ships (not Essential).
dpkg-deb -f "$deb" Depends | grep -q ', procps$' ||
	fail "mdgpud: Depends lacks procps (ExecReload's /bin/kill)"
# Listed to a file first: grep -q stopping at the match would kill
# dpkg-deb with SIGPIPE (pipefail).
dpkg-deb -c "$deb" >"$t/mdgpud.contents"
grep -q ' ./usr/sbin/mdgpud -> ../libexec/mdgpu/mdgpud$' "$t/mdgpud.contents" ||
	fail "mdgpud: /usr/sbin/mdgpud is not a link to ../libexec/mdgpu/mdgpud"
ok "mdgpud: conffile, Depends $(dpkg-deb -f "$deb" Depends), sbin link"
# The shipped config opens the admin socket to group mdgpu, read-only for
# its members: what mdgpu-metrics@.service (DynamicUser, group mdgpu) needs.
dpkg-deb --fsys-tarfile "$deb" | tar -xO ./etc/mdgpu/mdgpud.conf >"$t/shipped.conf"
grep -qx 'admin_socket_group = mdgpu' "$t/shipped.conf" ||
	fail "mdgpud.conf: no 'admin_socket_group = mdgpu'"
grep -qx 'admin_socket_mode = 0660' "$t/shipped.conf" ||
	fail "mdgpud.conf: no 'admin_socket_mode = 0660'"
ok "mdgpud.conf: admin_socket_group = mdgpu, admin_socket_mode = 0660"
for pkg in mdgpu-dkms mdgpu-guest-dkms; do
	[ "$(dpkg-deb -f "$BUILD/deb/${pkg}_${VERSION}_all.deb" Depends)" = \
		"dkms (>= 3.0)" ] || fail "$pkg: Depends is not dkms"
done
ok "the -dkms packages are Architecture all and depend on dkms"

step "manual pages, bash completion"
BUILD="$BUILD" TOP="$TOP" "$P/tests/check-man.sh"
pass=$((pass + 1))

step "dpkg --root $root"
mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates" \
	"$root/var/lib/dpkg/triggers" "$root/etc"
# The database: only the packages ours depend on, as this machine has
# them (or at a version that satisfies the dependency).
for dep in libc6:2.36-9 dkms:3.0.10-8 linux-libc-dev:6.1.0-1 \
	procps:2:4.0.2-3; do
	name=${dep%%:*}
	ver=$(dpkg-query -W -f '${Version}' "$name" 2>/dev/null || true)
	arch=$(dpkg --print-architecture)
	[ "$name" != dkms ] || arch=all
	printf 'Package: %s\nStatus: install ok installed\nPriority: optional\nVersion: %s\nArchitecture: %s\nMaintainer: none\nDescription: seeded by check-packaging\n\n' \
		"$name" "${ver:-${dep#*:}}" "$arch"
	: >"$root/var/lib/dpkg/info/$name.list"
done >"$root/var/lib/dpkg/status"
touch "$root/var/lib/dpkg/available"
dpkg_root() {
	PATH="/usr/local/sbin:/usr/sbin:/sbin:$PATH" dpkg --root="$root" \
		--force-script-chrootless --force-not-root \
		--log="$t/dpkg.log" "$@"
}
dpkg_root -i "${debs[@]}" >"$t/dpkg-install.log" 2>&1 ||
	{ cat "$t/dpkg-install.log"; fail "dpkg --root -i"; }
st=$(dpkg-query --admindir="$root/var/lib/dpkg" -W \
	-f '${Package} ${Version} ${db:Status-Abbrev}\n' | grep -c " $VERSION ii ")
[ "$st" -eq 5 ] || fail "$st of 5 packages installed (dpkg-query)"
ok "5 packages 'install ok installed' at $VERSION"
if ! dpkg_root --verify mdgpud libmdgpu-dev mdgpu-libcuda mdgpu-dkms \
	mdgpu-guest-dkms >"$t/verify.log" 2>&1 || [ -s "$t/verify.log" ]; then
	cat "$t/verify.log"
	fail "dpkg --verify"
fi
ok "dpkg --verify: every file matches its md5sum"
if [ -e "$root/var/lib/dkms" ] || grep -q "Building module" "$t/dpkg-install.log"; then
	fail "a DKMS postinst built modules in the root"
fi
ok "no DKMS build in the root (postinst honours DPKG_ROOT)"
if command -v systemd-sysusers >/dev/null; then
	grep -q '^mdgpu:x:[0-9]*:' "$root/etc/group" ||
		fail "postinst: no group mdgpu in $root/etc/group"
	ok "postinst: systemd-sysusers --root made group $(grep '^mdgpu:' "$root/etc/group")"
	grep -qx 'g mdgpu -' "$root/usr/lib/sysusers.d/mdgpu.conf" ||
		fail "sysusers.d/mdgpu.conf: no 'g mdgpu -'"
	# A second configure (an upgrade) keeps the group and its gid.
	cp "$root/etc/group" "$t/group.before"
	DPKG_ROOT="$root" "$root/var/lib/dpkg/info/mdgpud.postinst" configure \
		>>"$t/dpkg-install.log" 2>&1 || fail "mdgpud.postinst configure again"
	cmp -s "$t/group.before" "$root/etc/group" ||
		fail "postinst again changed $root/etc/group"
	ok "postinst again: group mdgpu as it was"
else
	echo "   SKIP: systemd-sysusers not installed: group not checked"
fi

step "installed programs"
bin="$root/usr/bin" sbin="$root/usr/sbin" lx="$root/usr/libexec/mdgpu"
for p in "$sbin/mdgpud" "$lx/mdgpud-worker" "$sbin/mdgpuctl" "$bin/mdgpu-spin"; do
	n=$(basename "$p")
	[ "$("$p" --version)" = "$n $VERSION" ] || fail "$p --version"
	"$p" --help >"$t/help.out" 2>&1 || fail "$p --help exits $?"
	grep -q '^usage: ' "$t/help.out" || fail "$p --help prints no usage"
done
ok "mdgpud, mdgpud-worker, mdgpuctl, mdgpu-spin: --version '<name> $VERSION', --help exits 0"

# The daemon from the root, with its shipped config, on the sim backend.
run="$t/run"
mkdir -p "$run"
sock="$run/mdgpud.sock" admin="$run/mdgpud-admin.sock"
python3 "$P/tests/notify-listen.py" "$run/notify" "$admin" "$t/notify.out" &
listener=$!
for _ in $(seq 50); do [ -S "$run/notify" ] && break; sleep 0.1; done
: >"$t/mdgpud.err"
js=$(stat -c %d:%i "$t/mdgpud.err")
# The shipped config's admin_socket_group is mdgpu, which the root has
# and this machine need not: without it the daemon refuses to start and
# says why; it then runs with this user's group standing in.
out=$("$sbin/mdgpud" -c "$root/etc/mdgpu/mdgpud.conf" \
	-o socket_path="$sock" -o backend=sim \
	-o admin_socket_group=no-such-group-mdgpu 2>&1) && st=0 || st=$?
if [ "$st" != 2 ] ||
	[[ $out != *"admin_socket_group = no-such-group-mdgpu: no such group"* ]]; then
	fail "mdgpud with an unknown admin_socket_group: exit $st: $out"
fi
if [ -e "$sock" ] || [ -e "$admin" ]; then
	fail "mdgpud with an unknown admin_socket_group left a socket"
fi
ok "an unknown admin_socket_group stops the start (exit 2), no socket made"
grp=$(id -gn)
NOTIFY_SOCKET="$run/notify" JOURNAL_STREAM="$js" \
	"$sbin/mdgpud" -c "$root/etc/mdgpu/mdgpud.conf" \
	-o socket_path="$sock" -o backend=sim -o admin_socket_group="$grp" \
	2>>"$t/mdgpud.err" &
daemon_pid=$!
wait "$listener" || { cat "$t/mdgpud.err"; fail "no READY=1 on \$NOTIFY_SOCKET"; }
grep -qx 'READY=1' "$t/notify.out" || fail "first notification is not READY=1"
grep -q "^admin: protocol=1 .*daemon_version=$VERSION" "$t/notify.out" ||
	{ cat "$t/notify.out"; fail "admin socket did not answer at READY=1"; }
ok "READY=1 on \$NOTIFY_SOCKET, admin socket answering when it came"
[ "$(stat -c '%a %G' "$admin")" = "660 $grp" ] ||
	fail "admin socket: $(stat -c '%a %G' "$admin"), not 660 $grp"
ok "admin socket: mode 660, group $grp (the shipped mode, admin_socket_group)"
out=$("$sbin/mdgpuctl" -s "$admin" version)
[[ $out == *"daemon_version=$VERSION"* ]] || fail "mdgpuctl version: $out"
ok "mdgpuctl version: $out"
"$bin/mdgpu-spin" -s "$sock" -m 16 -d 1 >"$t/spin.out" 2>&1 ||
	{ cat "$t/spin.out"; fail "installed mdgpu-spin through installed mdgpud"; }
ok "installed mdgpu-spin verified its work through the installed mdgpud"

pc="$root/usr/lib/$multiarch/pkgconfig"
flags=$(PKG_CONFIG_LIBDIR="$pc" PKG_CONFIG_SYSROOT_DIR="$root" \
	pkg-config --cflags --libs libmdgpu)
# shellcheck disable=SC2086 # pkg-config's flags are words
cc -std=c11 -Wall -Wextra -Werror -o "$t/client" "$P/tests/client.c" $flags ||
	fail "client against the installed libmdgpu ($flags)"
"$t/client" "$sock" >"$t/client.out" || fail "client: $(cat "$t/client.out")"
ok "client built with pkg-config ($flags): $(cat "$t/client.out")"

cc -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -o "$t/cuclient" "$P/tests/cuclient.c" -ldl ||
	fail "cuclient"
LD_LIBRARY_PATH="$root/usr/lib/$multiarch/mdgpu" MDGPU_SOCKET="$sock" \
	"$t/cuclient" "$root/usr/lib/$multiarch/mdgpu/libcuda.so.1" \
	>"$t/cuclient.out" 2>&1 || fail "cuclient: $(cat "$t/cuclient.out")"
ok "installed libcuda.so.1 by LD_LIBRARY_PATH: $(cat "$t/cuclient.out")"

kill -TERM "$daemon_pid"
wait "$daemon_pid" || fail "mdgpud exited $? on SIGTERM"
daemon_pid=
if [ -e "$sock" ] || [ -e "$admin" ]; then fail "sockets left after SIGTERM"; fi
bad=$(grep -cv '^<[3-7]>' "$t/mdgpud.err" || true)
[ "$bad" -eq 0 ] || { cat "$t/mdgpud.err"; fail "$bad log lines without <N>"; }
grep -qx "<6>mdgpud $VERSION starting" "$t/mdgpud.err" ||
	fail "no '<6>mdgpud $VERSION starting' line"
ok "journald: all $(wc -l <"$t/mdgpud.err") log lines start with <N> (<6>mdgpud $VERSION starting)"

# The worker is found through /usr/sbin/mdgpud -> /usr/libexec/mdgpu/.
# Without a GPU the cuda backend then stops at its probe; with one, the
# daemon runs until the timeout.
worker_found() { # mdgpud log
	timeout 10 "$1" -c /dev/null -o backend=cuda -o worker_sandbox=off \
		-o socket_path="$run/w.sock" -o admin_socket_path=none \
		>"$2" 2>&1 </dev/null || true
	! grep -q 'mdgpud-worker not found' "$2"
}
worker_found "$sbin/mdgpud" "$t/worker.err" ||
	{ cat "$t/worker.err"; fail "installed mdgpud does not find mdgpud-worker"; }
mkdir -p "$t/lone" && cp "$lx/mdgpud" "$t/lone/"
worker_found "$t/lone/mdgpud" "$t/worker-lone.err" &&
	fail "a lone mdgpud found a worker: the check proves nothing"
ok "/usr/sbin/mdgpud finds /usr/libexec/mdgpu/mdgpud-worker (a lone copy does not)"

for p in man8/mdgpud.8 man8/mdgpuctl.8 man5/mdgpud.conf.5; do
	zcat "$root/usr/share/man/$p.gz" | cmp -s - "$BUILD/man/${p#*/}" ||
		fail "installed $p.gz is not build/man/${p#*/}"
done
ok "installed manual pages: mdgpud.8, mdgpuctl.8, mdgpud.conf.5 as built"
bc="$root/usr/share/bash-completion/completions"
bash -n "$bc/mdgpuctl" || fail "installed completion: bash -n"
[ "$(readlink "$bc/mdgpud")" = mdgpuctl ] || fail "completions/mdgpud is not a link to mdgpuctl"
# shellcheck disable=SC2016 # expanded by the inner bash
bash -c '. "$1" && complete -p mdgpuctl mdgpud' sh "$bc/mdgpud" >"$t/complete.out" ||
	fail "installed completion: complete -p"
grep -q -- '-F _mdgpud mdgpud$' "$t/complete.out" ||
	fail "installed completion: mdgpud has no completion function"
ok "installed bash completion: parses, completes mdgpuctl and mdgpud (a link)"

PACKAGING_TEST_DIR="$t" "$P/tests/check-instance.sh" "$lx/mdgpud-instance"
pass=$((pass + 1))

if command -v systemd-analyze >/dev/null; then
	# --recursive-errors=no: the root has no other units (sysinit.target);
	# the units' syntax and their ExecStart inside the root are checked.
	# Instances, not templates: %i must expand (the metrics unit's
	# Requires= names its daemon's instance).  mdgpud@'s ExecReload runs
	# procps' /bin/kill, which the root lacks: this machine's, for the
	# check only (removed after it, before the purge's leftover check).
	install -D -m 755 /bin/kill "$root/bin/kill"
	for unit in mdgpud@0000:41:00.0.service mdgpu-metrics@0000:41:00.0.service; do
		SYSTEMD_LOG_LEVEL=warning systemd-analyze verify --root="$root" \
			--recursive-errors=no \
			"$root/usr/lib/systemd/system/${unit%%@*}@.service:$unit" \
			>"$t/analyze.log" 2>&1 ||
			{ cat "$t/analyze.log"; fail "systemd-analyze verify $unit"; }
		! grep -i -e "mdgpud@" -e "mdgpu-metrics@" "$t/analyze.log" ||
			fail "systemd-analyze verify warns about $unit"
		ok "systemd-analyze verify --root accepts $unit"
	done
	rm "$root/bin/kill" && rmdir "$root/bin"
	u="$root/usr/lib/systemd/system/mdgpu-metrics@.service"
	# shellcheck disable=SC2016 # the unit's own ${...}, not expanded here
	grep -qx 'ExecStart=/usr/sbin/mdgpuctl -s /run/mdgpu/%i/mdgpud-admin.sock serve-metrics --listen ${MDGPU_METRICS_LISTEN}' "$u" ||
		fail "mdgpu-metrics@.service: ExecStart"
	for d in 'Requires=mdgpud@%i.service' 'After=mdgpud@%i.service' \
		'EnvironmentFile=-/etc/mdgpu/mdgpu-metrics@%i.env' \
		'DynamicUser=yes' 'SupplementaryGroups=mdgpu' \
		'CapabilityBoundingSet=' 'NoNewPrivileges=yes' \
		'ProtectSystem=strict' \
		'RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6'; do
		grep -qxF "$d" "$u" || fail "mdgpu-metrics@.service: no $d"
	done
	! grep -q '^User=' "$u" || fail "mdgpu-metrics@.service: a fixed User="
	ok "mdgpu-metrics@.service: ExecStart, its daemon's instance, environment file, DynamicUser with group mdgpu, hardening"
else
	echo "   SKIP: systemd-analyze not installed"
fi

step "DKMS builds from the installed sources"
BUILD="$BUILD" VERSION="$VERSION" MAKE="$MAKE" \
	"$P/tests/check-dkms.sh" "$root/usr/src"
pass=$((pass + 6))

step "dpkg --purge"
dpkg_root --purge mdgpud libmdgpu-dev mdgpu-libcuda mdgpu-dkms \
	mdgpu-guest-dkms >"$t/dpkg-purge.log" 2>&1 ||
	{ cat "$t/dpkg-purge.log"; fail "dpkg --root --purge"; }
left=$(cd "$root" && find . ! -type d ! -path './var/lib/dpkg/*' \
	! -path './var/log/*' ! -path './etc/.pwd.lock' ! -path './etc/group*' \
	! -path './etc/gshadow*' \
	! -path './etc/passwd*' ! -path './etc/shadow*' | sort)
[ -z "$left" ] || fail "left after purge: $left"
[ ! -e "$root/etc/mdgpu" ] || fail "/etc/mdgpu left after purge"
n=$(dpkg-query --admindir="$root/var/lib/dpkg" -W -f '${db:Status-Abbrev}\n' \
	mdgpud libmdgpu-dev mdgpu-libcuda mdgpu-dkms mdgpu-guest-dkms 2>/dev/null |
	grep -c '^ii' || true)
[ "$n" -eq 0 ] || fail "$n packages still installed after purge"
ok "purge: no file of the five left in the root, /etc/mdgpu gone"

step "make install / uninstall, DESTDIR, default PREFIX"
d="$t/destdir"
mk() {
	# shellcheck disable=SC2086 # MAKE may hold options
	$MAKE -s --no-print-directory -C "$TOP" BUILD="$BUILD" DESTDIR="$d" \
		MDGPU_VERSION="$VERSION" "$@" \
		>>"$t/make-install.log" 2>&1 || { cat "$t/make-install.log"; fail "make $*"; }
}
mk install install-dkms install-guest
n=0
for f in usr/local/sbin/mdgpud usr/local/libexec/mdgpu/mdgpud \
	usr/local/libexec/mdgpu/mdgpud-worker usr/local/libexec/mdgpu/mdgpud-instance \
	usr/local/sbin/mdgpuctl usr/local/bin/mdgpu-spin usr/local/lib/libmdgpu.a \
	usr/local/lib/pkgconfig/libmdgpu.pc usr/local/include/mdgpu/mdgpu.h \
	usr/local/include/mdgpu/uapi/mdgpu.h usr/local/lib/mdgpu/libcuda.so.1 \
	usr/local/share/mdgpu/mdgpu-libcuda.conf etc/mdgpu/mdgpud.conf \
	usr/local/lib/systemd/system/mdgpud@.service \
	usr/local/lib/systemd/system/mdgpu-metrics@.service \
	usr/local/lib/sysusers.d/mdgpu.conf usr/local/lib/modules-load.d/mdgpu.conf \
	usr/local/lib/udev/rules.d/60-mdgpu-guest.rules \
	usr/local/share/doc/mdgpu/install.md usr/local/share/doc/mdgpu/COPYING \
	usr/local/share/man/man8/mdgpud.8.gz usr/local/share/man/man8/mdgpuctl.8.gz \
	usr/local/share/man/man5/mdgpud.conf.5.gz \
	usr/local/share/bash-completion/completions/mdgpuctl \
	usr/local/share/bash-completion/completions/mdgpud \
	"usr/src/mdgpu-$VERSION/dkms.conf" "usr/src/mdgpu-guest-$VERSION/dkms.conf"; do
	[ -e "$d/$f" ] || fail "make install: $f missing"
	n=$((n + 1))
done
[ "$(readlink "$d/usr/local/sbin/mdgpud")" = ../libexec/mdgpu/mdgpud ] ||
	fail "make install: sbin/mdgpud link"
grep -qx 'prefix=/usr/local' "$d/usr/local/lib/pkgconfig/libmdgpu.pc" ||
	fail "libmdgpu.pc: prefix"
grep -qx 'ExecStart=/usr/local/libexec/mdgpu/mdgpud-instance %i' \
	"$d/usr/local/lib/systemd/system/mdgpud@.service" || fail "unit: ExecStart"
grep -q '^ExecStart=/usr/local/sbin/mdgpuctl ' \
	"$d/usr/local/lib/systemd/system/mdgpu-metrics@.service" ||
	fail "metrics unit: ExecStart"
grep -qx '/usr/local/lib/mdgpu' "$d/usr/local/share/mdgpu/mdgpu-libcuda.conf" ||
	fail "mdgpu-libcuda.conf: library folder"
ok "make install: $n files under DESTDIR with PREFIX=/usr/local, paths substituted"
echo "# edited" >>"$d/etc/mdgpu/mdgpud.conf"
mk install-daemon
grep -qx '# edited' "$d/etc/mdgpu/mdgpud.conf" || fail "make install replaced an edited config"
ok "make install keeps an existing /etc/mdgpu/mdgpud.conf"
mk uninstall
left=$(cd "$d" && find . ! -type d | sort)
[ "$left" = "./etc/mdgpu/mdgpud.conf" ] || fail "left after uninstall: $left"
ok "make uninstall removes everything but the config"

echo "check-packaging: $pass checks passed in ${SECONDS} s"
