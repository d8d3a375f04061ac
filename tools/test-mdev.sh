#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# mdgpuctl's mdev commands (types, create, remove, show, set; ctl_mdev.c)
# on a fake sysfs tree in a temporary directory, reached through
# MDGPU_SYSFS_MDEV_BUS and MDGPU_SYSFS_MDEV_DEVICES: output, files
# written, the rollback of a refused knob, mdevctl's command sequence
# (a fake mdevctl first on PATH logs its argv), set routed by a fake
# admin socket's list, and hostile arguments with nothing written.
# The fake tree imitates the kernel's layout; what the kernel makes on
# create (the device directory) is made beforehand by mkdev.
# CTL: the mdgpuctl to test (default $BUILD/mdgpuctl; make check-tools
# runs it a second time with the ASAN+UBSAN build).
set -u

BUILD=${BUILD:-$(cd "$(dirname "$0")/.." && pwd)/build}
CTL=${CTL:-$BUILD/mdgpuctl}
TMP=$(mktemp -d /tmp/mdgpuctl-mdev.XXXXXX)
chmod 755 "$TMP"	# the EACCES check runs as another uid
SYS=$TMP/sys
BUS=$SYS/class/mdev_bus
DEV=$SYS/bus/mdev/devices
export MDGPU_SYSFS_MDEV_BUS=$BUS MDGPU_SYSFS_MDEV_DEVICES=$DEV
export MDEVCTL_LOG=$TMP/mdevctl.log
unset MDEVCTL_FAIL MDGPU_ADMIN_SOCKET
PASSES=0
FAILS=0
FPID=

cleanup() {
	[ -n "$FPID" ] && kill "$FPID" 2>/dev/null && wait "$FPID" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT

ok() { PASSES=$((PASSES + 1)); }
fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }

# expect STATUS CMD...: run CMD, check its exit status; output in $OUT/$ERR.
expect() {
	local want=$1 got
	shift
	"$@" >"$TMP/out" 2>"$TMP/err"
	got=$?
	OUT=$(cat "$TMP/out")
	ERR=$(cat "$TMP/err")
	if [ "$got" != "$want" ]; then
		fail "${*#"$CTL"} -> exit $got, expected $want (stdout '$OUT', stderr '$ERR')"
		return 1
	fi
	ok
}

eq() { # eq WHAT GOT WANT
	if [ "$2" = "$3" ]; then ok; else fail "$1: got '$2', want '$3'"; fi
}

contains() { # contains WHAT HAYSTACK NEEDLE
	case $2 in
	*"$3"*) ok ;;
	*) fail "$1: '$3' not in '$2'" ;;
	esac
}

# Every path, kind and file content of the fake tree and the logs.
snapshot() {
	(cd "$TMP" && find sys bin -printf '%p %y %l\n' | sort &&
		find sys -type f -exec md5sum {} + | sort &&
		cat mdevctl.log daemon.log 2>/dev/null)
}

# unchanged WHAT CMD...: CMD (an expect ...) changes nothing.
unchanged() {
	local what=$1
	shift
	snapshot >"$TMP/before"
	"$@"
	if snapshot | diff "$TMP/before" - >"$TMP/diff"; then
		ok
	else
		fail "$what changed the tree: $(cat "$TMP/diff")"
	fi
}

# The kernel's files of a parent's type.
mktype() { # PARENT NAME AVAILABLE DESCRIPTION
	local d=$BUS/$1/mdev_supported_types/$2
	mkdir -p "$d"
	echo "${2#mdgpu-}" >"$d/name"
	echo "$3" >"$d/available_instances"
	printf '%b' "$4" >"$d/description"
	echo vfio-pci >"$d/device_api"
	: >"$d/create"
}

# What the kernel makes when UUID is written to create: the device under
# its parent, the bus's link to it, mdev_type, remove and mdgpu/.
mkdev() { # UUID PARENT TYPE
	local d=$BUS/$2/$1
	mkdir -p "$d/mdgpu" "$DEV"
	ln -s "../mdev_supported_types/$3" "$d/mdev_type"
	ln -s "../../../class/mdev_bus/$2/$1" "$DEV/$1"
	: >"$d/remove"
	echo 1 >"$d/mdgpu/weight"
	echo 100 >"$d/mdgpu/cap"
	echo 4 >"$d/mdgpu/priority"
	echo ready >"$d/mdgpu/status"
	echo 7 >"$d/mdgpu/vgpu_id"
	printf 'doorbells: 12\ncompletions: 11\ninterrupts: 10\nbad_accesses: 0\ndma_bytes: 4096\nresets: 1\nhangs: 0\ncontexts_lost: 0\ngeneration: 2\n' \
		>"$d/mdgpu/stats"
}

knob() { cat "$DEV/$1/mdgpu/$2"; } # knob UUID NAME

P0=0000:00:03.0
mktype "$P0" mdgpu-1g 3 'framebuffer: 1024 MiB\nmax_instances: 16\ndefault_weight: 1\n'
mktype "$P0" mdgpu-4g 1 'framebuffer: 4096 MiB\nmax_instances: 4\ndefault_weight: 4\n'
mktype mdgpu1 mdgpu-half 2 'framebuffer: 8192 MiB\nmax_instances: 2\n'
mktype other nvidia-35 8 'not ours\n'
mkdir -p "$BUS/bare" "$DEV" "$TMP/bin"

# The fake mdevctl: logs its argv; fails (exit 3) when its verb is
# $MDEVCTL_FAIL; prints on stdout, which must not reach mdgpuctl's.
cat >"$TMP/bin/mdevctl" <<'EOF'
#!/bin/sh
echo "$*" >>"$MDEVCTL_LOG"
echo "fake mdevctl says hello"
[ "$1" = "${MDEVCTL_FAIL:-}" ] && exit 3
exit 0
EOF
chmod 755 "$TMP/bin/mdevctl"
export PATH="$TMP/bin:$PATH"

U1=6d677075-0000-4000-8000-0000000000a1
U2=6d677075-0000-4000-8000-0000000000a2
U3=6d677075-0000-4000-8000-0000000000a3
U4=6d677075-0000-4000-8000-0000000000a4
U5=6d677075-0000-4000-8000-0000000000a5
U6=6d677075-0000-4000-8000-0000000000a6
NOPE=6d677075-0000-4000-8000-0000000000ff

# ------------------------------------------------------------- types
T1="mdev_parent=$P0 type=mdgpu-1g name=1g available=3 description=framebuffer:_1024_MiB,max_instances:_16,default_weight:_1"
T4="mdev_parent=$P0 type=mdgpu-4g name=4g available=1 description=framebuffer:_4096_MiB,max_instances:_4,default_weight:_4"
TH="mdev_parent=mdgpu1 type=mdgpu-half name=half available=2 description=framebuffer:_8192_MiB,max_instances:_2"
expect 0 "$CTL" types && eq "types" "$OUT" "$T1"$'\n'"$T4"$'\n'"$TH"
expect 0 "$CTL" types "$P0" && eq "types $P0" "$OUT" "$T1"$'\n'"$T4"
expect 0 "$CTL" types --json &&
	if python3 -c 'import json, sys
a = json.load(sys.stdin)
assert [o["type"] for o in a] == ["mdgpu-1g", "mdgpu-4g", "mdgpu-half"]
assert [o["available"] for o in a] == [3, 1, 2]
assert a[0]["mdev_parent"] == "0000:00:03.0" and a[2]["name"] == "half"' <<<"$OUT"; then
		ok
	else
		fail "types --json: $OUT"
	fi
J=$OUT
expect 0 "$CTL" -j types && eq "-j types" "$OUT" "$J"
expect 0 "$CTL" types mdgpu1 --json &&
	eq "types mdgpu1 --json" "$OUT" '[
  {"mdev_parent": "mdgpu1", "type": "mdgpu-half", "name": "half", "available": 2, "description": "framebuffer:_8192_MiB,max_instances:_2"}
]'
expect 1 "$CTL" types other && contains "types other" "$ERR" "has no mdgpu-* types"
expect 1 "$CTL" types bare
expect 1 "$CTL" types nosuch && contains "types nosuch" "$ERR" "$BUS/nosuch: No such file"
for bad in . .. a/b -x "$(printf 'a\tb')" "" "$(printf '%0200d' 0)"; do
	expect 2 "$CTL" types "$bad"
done
expect 2 "$CTL" types "$P0" mdgpu1
MDGPU_SYSFS_MDEV_BUS=$TMP/none expect 0 "$CTL" types && eq "types, no bus" "$OUT" ""
MDGPU_SYSFS_MDEV_BUS=$TMP/none expect 0 "$CTL" types --json && eq "types --json, no bus" "$OUT" "[]"

# ------------------------------------------------------------ create
C1=$BUS/$P0/mdev_supported_types/mdgpu-1g/create
C4=$BUS/$P0/mdev_supported_types/mdgpu-4g/create
expect 0 "$CTL" create "$P0" 1g &&
	if [[ $OUT =~ ^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$ ]]; then
		ok
		eq "create without --uuid: the create file" "$(cat "$C1")" "$OUT"
	else
		fail "create without --uuid printed '$OUT'"
	fi
mkdev "$U1" "$P0" mdgpu-1g
# an upper-case UUID: sysfs names the device in lower case
expect 0 "$CTL" create "$P0" 1g --uuid "${U1^^}" --weight 5 --cap 50 --priority 2 &&
	eq "create --uuid: stdout" "$OUT" "$U1"
eq "create --uuid: the create file" "$(cat "$C1")" "$U1"
eq "create: knobs" "$(knob "$U1" weight) $(knob "$U1" cap) $(knob "$U1" priority)" "5 50 2"
eq "create: remove untouched" "$(cat "$DEV/$U1/remove")" ""
mkdev "$U6" "$P0" mdgpu-4g
expect 0 "$CTL" create "$P0" mdgpu-4g --uuid="$U6" --weight=7 &&
	eq "create mdgpu-4g --weight=7" "$(cat "$C4") $(knob "$U6" weight) $(knob "$U6" cap)" "$U6 7 100"

# a refused knob: the vGPU is removed again (a directory for the knob
# makes its write fail, as the kernel's EINVAL would)
mkdev "$U2" "$P0" mdgpu-1g
rm "$DEV/$U2/mdgpu/weight" && mkdir "$DEV/$U2/mdgpu/weight"
expect 1 "$CTL" create "$P0" 1g --uuid "$U2" --weight 5 &&
	eq "rollback: stdout" "$OUT" ""
contains "rollback: the knob's error" "$ERR" "$DEV/$U2/mdgpu/weight: Is a directory"
contains "rollback: removed" "$ERR" "vGPU $U2 removed again"
eq "rollback: remove written" "$(cat "$DEV/$U2/remove")" 1
mkdev "$U3" "$P0" mdgpu-1g
rm "$DEV/$U3/mdgpu/cap" && mkdir "$DEV/$U3/mdgpu/cap"
expect 1 "$CTL" create "$P0" 1g --uuid "$U3" --priority 3 --weight 6 --cap 50
eq "rollback at cap: weight written, priority not" "$(knob "$U3" weight) $(knob "$U3" priority) $(cat "$DEV/$U3/remove")" "6 4 1"
mkdev "$U4" "$P0" mdgpu-1g
rm "$DEV/$U4/mdgpu/weight" "$DEV/$U4/remove"
mkdir "$DEV/$U4/mdgpu/weight" "$DEV/$U4/remove"
expect 1 "$CTL" create "$P0" 1g --uuid "$U4" --weight 5 &&
	contains "rollback fails too" "$ERR" "removing it failed: writing 1 to $DEV/$U4/remove: Is a directory; remove it by hand"

# hostile or wrong arguments: nothing written
refused() { # STATUS ARGS...: exit STATUS, a message, nothing written
	local st=$1
	shift
	unchanged "create $*" expect "$st" "$CTL" create "$@"
	if [ -n "$ERR" ]; then ok; else fail "create $*: no message"; fi
}
refused 2 "../$P0" 1g --uuid "$U5"
refused 2 "$P0" ../mdgpu-1g --uuid "$U5"
refused 2 "$P0" "1g/../../x" --uuid "$U5"
refused 2 -p 1g --uuid "$U5"
refused 2 "$P0" $'1g\n' --uuid "$U5"
refused 2 "$P0" 1g --uuid "${U5}0"
refused 2 "$P0" 1g --uuid "${U5/-/_}"
refused 2 "$P0" 1g --uuid "$U5" --uuid "$U5"
refused 2 "$P0" 1g --uuid "$U5" --weight 3 --weight 4
refused 2 "$P0" 1g --uuid "$U5" --speed 3
refused 2 "$P0" 1g --uuid "$U5" --weight
refused 2 "$P0" 1g --uuid "$U5" extra
refused 2 "$P0"
refused 1 "$P0" 1g --uuid "$U5" --weight 5x
refused 1 "$P0" 1g --uuid "$U5" --weight -1
refused 1 "$P0" 1g --uuid "$U5" --cap "+5"
refused 1 "$P0" 1g --uuid "$U5" --priority ""
refused 1 "$P0" 1g --uuid "$U5" --weight 12345678901
refused 1 "$P0" 9g --uuid "$U5"
contains "create 9g" "$ERR" "no type mdgpu-9g ($BUS/$P0/mdev_supported_types/mdgpu-9g: No such file"
refused 1 nosuch 1g --uuid "$U5"
contains "create on nosuch" "$ERR" "no mdev parent nosuch"
refused 2 "$P0" 1g --json
# the kernel refuses the UUID (here: create is a directory)
mktype mdgpu1 mdgpu-broken 1 'x\n'
rm "$BUS/mdgpu1/mdev_supported_types/mdgpu-broken/create"
mkdir "$BUS/mdgpu1/mdev_supported_types/mdgpu-broken/create"
refused 1 mdgpu1 broken --uuid "$U5"
contains "create refused" "$ERR" "writing $U5 to $BUS/mdgpu1/mdev_supported_types/mdgpu-broken/create: Is a directory"

# ------------------------------------------------------- show and set
S="mdev_uuid=$U1 mdev_parent=$P0 type=mdgpu-1g status=ready vgpu_id=7 weight=5 cap=50 priority=2 stats.doorbells=12 stats.completions=11 stats.interrupts=10 stats.bad_accesses=0 stats.dma_bytes=4096 stats.resets=1 stats.hangs=0 stats.contexts_lost=0 stats.generation=2"
expect 0 "$CTL" show "$U1" && eq "show" "$OUT" "$S"
expect 0 "$CTL" show "${U1^^}" && eq "show (upper case)" "$OUT" "$S"
expect 0 "$CTL" show "$U1" --json &&
	if python3 -c 'import json, sys
o = json.load(sys.stdin)
assert o["mdev_uuid"] == sys.argv[1] and o["type"] == "mdgpu-1g"
assert o["weight"] == 5 and o["status"] == "ready"
assert o["stats.doorbells"] == 12 and o["stats.generation"] == 2' "$U1" <<<"$OUT"; then
		ok
	else
		fail "show --json: $OUT"
	fi
J=$OUT
expect 0 "$CTL" --json show "$U1" && eq "--json show" "$OUT" "$J"
expect 1 "$CTL" show "$NOPE" && contains "show unknown" "$ERR" "no mdgpu vGPU $NOPE"
expect 2 "$CTL" show nope
expect 2 "$CTL" show
expect 2 "$CTL" show "$U1" "$U2"

expect 0 "$CTL" set "$U1" weight 9 && eq "set weight" "$(knob "$U1" weight)" 9
expect 0 "$CTL" set "${U1^^}" cap 30 && eq "set cap" "$(knob "$U1" cap)" 30
expect 0 "$CTL" set "$U1" priority 0 && eq "set priority" "$(knob "$U1" priority)" 0
eq "set: stdout quiet" "$OUT" ""
unchanged "set speed" expect 1 "$CTL" set "$U1" speed 3
contains "set speed" "$ERR" "unknown knob 'speed'"
unchanged "set 3x" expect 1 "$CTL" set "$U1" weight 3x
unchanged "set -3" expect 1 "$CTL" set "$U1" weight -3
unchanged "set 0x10" expect 1 "$CTL" set "$U1" weight 0x10
unchanged "set ''" expect 2 "$CTL" set "$U1" weight ""
unchanged "set '3 4'" expect 2 "$CTL" set "$U1" weight "3 4"
unchanged "set unknown" expect 1 "$CTL" set "$NOPE" weight 3
contains "set unknown" "$ERR" "no mdgpu vGPU $NOPE"
# a knob the kernel refuses: its file and errno named
rm "$DEV/$U1/mdgpu/cap" && mkdir "$DEV/$U1/mdgpu/cap"
expect 1 "$CTL" set "$U1" cap 20 && contains "set refused" "$ERR" "writing 20 to $DEV/$U1/mdgpu/cap: Is a directory"
rmdir "$DEV/$U1/mdgpu/cap" && echo 30 >"$DEV/$U1/mdgpu/cap"
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	unchanged "set as nobody" expect 5 setpriv --reuid=65534 --regid=65534 \
		--clear-groups "$CTL" set "$U1" weight 3
	contains "set as nobody" "$ERR" "Permission denied"
	expect 5 setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$CTL" remove "$U1"
else
	echo "SKIP: EACCES -> 5 (needs root and setpriv)"
fi
# paths are bounded: a root too long for a path is refused, not cut
long=$TMP/$(printf 'x%.0s' $(seq 4100))
MDGPU_SYSFS_MDEV_DEVICES=$long expect 2 "$CTL" show "$U1" &&
	contains "long root" "$ERR" "path too long"

# set by the daemon's vGPU id: a fake admin socket answers list with an
# mdev vGPU (id 7) and a socket-transport one (id 8), logs the requests.
ADMIN=$TMP/admin.sock
python3 -c 'import socket, sys
path, log, u = sys.argv[1:4]
s = socket.socket(socket.AF_UNIX)
s.bind(path)
s.listen(8)
while True:
    c, _ = s.accept()
    f = c.makefile("rwb")
    req = f.readline().decode().strip()
    with open(log, "a") as l:
        l.write(req + "\n")
    if req == "list":
        f.write(("id=7 type=1g weight=9 mdev_uuid=%s\n" % u).encode())
        f.write(b"id=8 type=1g weight=1 mdev_uuid=-\nok\n")
    elif req.startswith("set 9 "):
        f.write(b"err ENOENT no vGPU 9\n")
    else:
        f.write(b"ok\n")
    f.close()
    c.close()' "$ADMIN" "$TMP/daemon.log" "$U1" &
FPID=$!
for _ in $(seq 100); do [ -S "$ADMIN" ] && break; sleep 0.05; done
expect 0 "$CTL" -s "$ADMIN" set 7 weight 11 &&
	eq "set 7 (mdev): sysfs" "$(knob "$U1" weight)" 11
eq "set 7 (mdev): only list asked" "$(cat "$TMP/daemon.log")" "list"
: >"$TMP/daemon.log"
expect 0 "$CTL" -s "$ADMIN" set 8 weight 12 &&
	eq "set 8 (socket): the daemon's set" "$(cat "$TMP/daemon.log")" $'list\nset 8 weight 12'
eq "set 8: sysfs untouched" "$(knob "$U1" weight)" 11
: >"$TMP/daemon.log"
expect 1 "$CTL" -s "$ADMIN" set 9 weight 3 && contains "set 9" "$ERR" "ENOENT"
eq "set 9 (unknown): the daemon answers" "$(cat "$TMP/daemon.log")" $'list\nset 9 weight 3'
: >"$TMP/daemon.log"
expect 1 "$CTL" -s "$ADMIN" set 7 weight 3x
eq "set 7 weight 3x: refused, only list asked" "$(knob "$U1" weight) $(cat "$TMP/daemon.log")" "11 list"
: >"$TMP/daemon.log"
expect 0 "$CTL" -s "$ADMIN" set abc weight 3
eq "set abc: straight to the daemon" "$(cat "$TMP/daemon.log")" "set abc weight 3"
kill "$FPID" && wait "$FPID" 2>/dev/null
FPID=
expect 3 "$CTL" -s "$ADMIN" set 7 weight 3

# ------------------------------------------------------------ remove
expect 0 "$CTL" remove "$U1" && eq "remove" "$(cat "$DEV/$U1/remove")" 1
expect 0 "$CTL" remove "${U6^^}" && eq "remove (upper case)" "$(cat "$DEV/$U6/remove")" 1
expect 1 "$CTL" remove "$NOPE" &&
	contains "remove unknown" "$ERR" "no vGPU $NOPE: writing 1 to $DEV/$NOPE/remove: No such file"
unchanged "remove bad" expect 2 "$CTL" remove "../$U1"
unchanged "remove two" expect 2 "$CTL" remove "$U1" "$U2"
unchanged "remove none" expect 2 "$CTL" remove
unchanged "remove --json" expect 2 "$CTL" --json remove "$U1"

# ----------------------------------------------------------- mdevctl
mdevctl_log() { cat "$MDEVCTL_LOG" 2>/dev/null; rm -f "$MDEVCTL_LOG"; }
DEF="define -u $U5 -p $P0 -t mdgpu-1g --auto"
expect 0 "$CTL" create "$P0" 1g --uuid "$U5" --cap 40 --weight 3 --mdevctl &&
	eq "mdevctl create: stdout" "$OUT" "$U5"
eq "mdevctl create: sequence" "$(mdevctl_log)" "$DEF
modify -u $U5 --addattr=mdgpu/weight --value=3
modify -u $U5 --addattr=mdgpu/cap --value=40
start -u $U5"
contains "mdevctl's stdout on stderr" "$ERR" "fake mdevctl says hello"
MDEVCTL_FAIL=start expect 1 "$CTL" create "$P0" 1g --uuid "$U5" --mdevctl
eq "mdevctl start fails: undefined" "$(mdevctl_log)" "$DEF
start -u $U5
undefine -u $U5"
contains "mdevctl start fails: named" "$ERR" "mdevctl start -u $U5: exit status 3"
contains "mdevctl start fails: undone" "$ERR" "vGPU $U5 undefined again"
mkdev "$U5" "$P0" mdgpu-1g	# start failed after the device appeared
MDEVCTL_FAIL=start expect 1 "$CTL" create "$P0" 1g --uuid "$U5" --mdevctl
eq "mdevctl start fails, device there: stopped first" "$(mdevctl_log)" "$DEF
start -u $U5
stop -u $U5
undefine -u $U5"
MDEVCTL_FAIL=modify expect 1 "$CTL" create "$P0" 1g --uuid "$U5" --priority 1 --mdevctl
eq "mdevctl modify fails" "$(mdevctl_log)" "$DEF
modify -u $U5 --addattr=mdgpu/priority --value=1
stop -u $U5
undefine -u $U5"
MDEVCTL_FAIL=define expect 1 "$CTL" create "$P0" 1g --uuid "$U5" --mdevctl
eq "mdevctl define fails: nothing else" "$(mdevctl_log)" "$DEF"
expect 0 "$CTL" remove "$U5" --mdevctl
eq "mdevctl remove" "$(mdevctl_log)" "stop -u $U5
undefine -u $U5"
MDEVCTL_FAIL=stop expect 1 "$CTL" remove --mdevctl "$U5" &&
	contains "mdevctl stop fails, device there" "$ERR" "still exists; not undefined"
eq "mdevctl stop fails, device there: no undefine" "$(mdevctl_log)" "stop -u $U5"
MDEVCTL_FAIL=stop expect 0 "$CTL" remove "$NOPE" --mdevctl
eq "mdevctl stop fails, device not running: undefined" "$(mdevctl_log)" "stop -u $NOPE
undefine -u $NOPE"
MDEVCTL_FAIL=undefine expect 1 "$CTL" remove "$NOPE" --mdevctl
rm -f "$MDEVCTL_LOG"
unchanged "mdevctl missing" expect 1 env PATH="$TMP/empty" \
	"$CTL" create "$P0" 1g --uuid "$U5" --weight 3 --mdevctl
contains "mdevctl missing" "$ERR" "mdevctl is not on PATH"
unchanged "mdevctl missing" expect 1 env PATH="$TMP/empty" \
	"$CTL" remove "$U5" --mdevctl

# ------------------------------------------------- qemu-scripts wrapper
VG=$(cd "$(dirname "$0")/.." && pwd)/qemu-scripts/mdgpu-vgpu
MDGPUCTL=$CTL expect 0 "$VG" show "$U2" && contains "mdgpu-vgpu show" "$OUT" "mdev_uuid=$U2"
MDGPUCTL=$CTL expect 2 "$VG" show nope
unchanged "mdgpu-vgpu list" expect 2 env MDGPUCTL="$CTL" "$VG" list
# without MDGPUCTL and mdgpuctl on PATH: ../build/mdgpuctl beside it
mkdir -p "$TMP/qs" "$TMP/build" "$TMP/a/alone"
cp "$VG" "$TMP/qs/" && cp "$VG" "$TMP/a/alone/"
ln -s "$(realpath "$CTL")" "$TMP/build/mdgpuctl"
if ! PATH=$TMP/bin:/usr/bin:/bin command -v mdgpuctl >/dev/null; then
	expect 0 env -u MDGPUCTL PATH="$TMP/bin:/usr/bin:/bin" \
		"$TMP/qs/mdgpu-vgpu" show "$U2" &&
		contains "mdgpu-vgpu: ../build/mdgpuctl" "$OUT" "mdev_uuid=$U2"
	expect 1 env -u MDGPUCTL PATH="$TMP/bin:/usr/bin:/bin" \
		"$TMP/a/alone/mdgpu-vgpu" show "$U2" &&
		contains "mdgpu-vgpu without mdgpuctl" "$ERR" "mdgpuctl is not on PATH"
else
	echo "SKIP: mdgpu-vgpu's fallback (mdgpuctl is installed in /usr/bin or /bin)"
fi

echo "$PASSES passed, $FAILS failed"
[ "$FAILS" -eq 0 ]
