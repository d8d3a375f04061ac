#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# mdgpuctl against a real build/mdgpud (sim backend) on a temporary socket:
# every command, its output, and every exit status mdgpuctl documents.
# Needs BUILD (make check-tools sets it).
set -u

BUILD=${BUILD:-$(cd "$(dirname "$0")/.." && pwd)/build}
CTL=$BUILD/mdgpuctl
SPIN=$BUILD/mdgpu-spin
TMP=$(mktemp -d /tmp/mdgpuctl-test.XXXXXX)
chmod 755 "$TMP"	# the EPERM checks run as another uid
SOCK=$TMP/mdgpud.sock
ADMIN=$TMP/mdgpud-admin.sock
DPID=
SPID=
FAILS=0
CHECKS=0

cleanup() {
	[ -n "$SPID" ] && kill "$SPID" 2>/dev/null && wait "$SPID" 2>/dev/null
	[ -n "$DPID" ] && kill "$DPID" 2>/dev/null && wait "$DPID" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT

fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }

# expect STATUS CMD...: run CMD, check its exit status; output in $OUT/$ERR.
expect() {
	local want=$1 got
	shift
	CHECKS=$((CHECKS + 1))
	"$@" >"$TMP/out" 2>"$TMP/err"
	got=$?
	OUT=$(cat "$TMP/out")
	ERR=$(cat "$TMP/err")
	if [ "$got" != "$want" ]; then
		fail "$* -> exit $got, expected $want (stdout '$OUT', stderr '$ERR')"
		return 1
	fi
	return 0
}

contains() { # contains HAYSTACK NEEDLE WHAT
	CHECKS=$((CHECKS + 1))
	case $1 in
	*"$2"*) ;;
	*) fail "$3: '$2' not in '$1'" ;;
	esac
}

"$BUILD/mdgpud" -o backend=sim -o sim_realtime=0 -o "socket_path=$SOCK" \
	-o admin_socket_mode=0666 -o log_level=warn &
DPID=$!
for _ in $(seq 200); do [ -S "$ADMIN" ] && break; sleep 0.05; done
[ -S "$ADMIN" ] || { echo "FAIL: mdgpud did not create $ADMIN"; exit 1; }

"$SPIN" -s "$SOCK" -T 2g -m 8 -d 30 >"$TMP/spin.out" 2>&1 &
SPID=$!
ID=
for _ in $(seq 200); do
	ID=$("$CTL" -s "$ADMIN" list 2>/dev/null | sed -n 's/^id=\([0-9]*\) type=2g .*/\1/p')
	[ -n "$ID" ] && break
	sleep 0.05
done
[ -n "$ID" ] || { echo "FAIL: the tenant never showed up in list"; exit 1; }

# Reading.
expect 0 "$CTL" -s "$ADMIN" list && contains "$OUT" "id=$ID type=2g " list
contains "$OUT" "fb_quota=" list
expect 0 env MDGPU_ADMIN_SOCKET="$ADMIN" "$CTL" stats &&
	contains "$OUT" "vgpus=1 " stats
expect 0 "$CTL" -s "$ADMIN" version && contains "$OUT" "protocol=1" version

# Changing.
expect 0 "$CTL" -s "$ADMIN" set "$ID" weight 5
expect 0 "$CTL" -s "$ADMIN" set "$ID" cap 50
expect 0 "$CTL" -s "$ADMIN" set "$ID" priority 2
expect 0 "$CTL" -s "$ADMIN" list &&
	contains "$OUT" "weight=5 cap=50 priority=2 " "knobs applied"
expect 0 "$CTL" -s "$ADMIN" policy equal-share
expect 0 "$CTL" -s "$ADMIN" timeslice 2000
expect 0 "$CTL" -s "$ADMIN" stats &&
	contains "$OUT" "policy=equal-share timeslice_us=2000 " "policy applied"

# Refused by the daemon: exit 1, its message on stderr, nothing changed.
expect 1 "$CTL" -s "$ADMIN" set "$ID" weight 0 && contains "$ERR" ERANGE w0
expect 1 "$CTL" -s "$ADMIN" set "$ID" weight 101 && contains "$ERR" ERANGE w101
expect 1 "$CTL" -s "$ADMIN" set "$ID" weight 3x && contains "$ERR" EINVAL w3x
expect 1 "$CTL" -s "$ADMIN" set "$ID" weight 99999999999999999999999 &&
	contains "$ERR" ERANGE overflow
expect 1 "$CTL" -s "$ADMIN" set 4242 weight 3 && contains "$ERR" ENOENT id
expect 1 "$CTL" -s "$ADMIN" set "$ID" speed 3 && contains "$ERR" EINVAL knob
expect 1 "$CTL" -s "$ADMIN" policy fastest && contains "$ERR" EINVAL policy
expect 1 "$CTL" -s "$ADMIN" timeslice 10 && contains "$ERR" ERANGE ts
expect 1 "$CTL" -s "$ADMIN" timeslice -5 && contains "$ERR" EINVAL ts-neg
expect 0 "$CTL" -s "$ADMIN" list &&
	contains "$OUT" "weight=5 cap=50 priority=2 " "unchanged after refusals"
expect 0 "$CTL" -s "$ADMIN" stats &&
	contains "$OUT" "policy=equal-share timeslice_us=2000 " "unchanged"

# Usage errors never reach the daemon: exit 2.
expect 2 "$CTL" -s "$ADMIN"
expect 2 "$CTL" -s "$ADMIN" frobnicate
expect 2 "$CTL" -s "$ADMIN" list extra
expect 2 "$CTL" -s "$ADMIN" set "$ID" weight
expect 2 "$CTL" -s "$ADMIN" set "$ID" weight "3 4"
expect 2 "$CTL" -s "$ADMIN" set "$ID" weight "$(printf '3\npolicy best-effort')"
expect 2 "$CTL" -s "$ADMIN" set "$ID" weight ""
expect 2 "$CTL" -t 0 -s "$ADMIN" list
expect 0 "$CTL" -s "$ADMIN" stats &&
	contains "$OUT" "policy=equal-share " "no smuggled request ran"

# Cannot connect: exit 3.
expect 3 "$CTL" -s "$TMP/nope.sock" list && contains "$ERR" "running" hint

# Protocol errors: exit 4 (a server that hangs up, one that never answers).
if command -v python3 >/dev/null; then
	python3 - "$TMP/fake.sock" "$TMP/mute.sock" <<'EOF' &
import socket, sys, time
socks = []
for path in sys.argv[1:]:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(path)
    s.listen(4)
    socks.append(s)
c, _ = socks[0].accept()
c.recv(256)
c.sendall(b"id=1 partial\n")
c.close()
m, _ = socks[1].accept()
time.sleep(4)
EOF
	FPID=$!
	for _ in $(seq 100); do [ -S "$TMP/mute.sock" ] && break; sleep 0.05; done
	expect 4 "$CTL" -s "$TMP/fake.sock" list && contains "$ERR" "closed" eof
	expect 4 "$CTL" -t 1 -s "$TMP/mute.sock" list && contains "$ERR" "in time" timeout
	kill "$FPID" 2>/dev/null
	wait "$FPID" 2>/dev/null
fi

# Not permitted: exit 5 (another uid may look, not change).
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	AS_NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)
	expect 0 "${AS_NOBODY[@]}" "$CTL" -s "$ADMIN" list
	expect 5 "${AS_NOBODY[@]}" "$CTL" -s "$ADMIN" set "$ID" weight 9 &&
		contains "$ERR" EPERM eperm
	expect 5 "${AS_NOBODY[@]}" "$CTL" -s "$ADMIN" policy best-effort
	expect 0 "$CTL" -s "$ADMIN" list &&
		contains "$OUT" "weight=5 " "nobody changed nothing"
else
	echo "SKIP: EPERM checks need root and setpriv"
fi

# The tenant verified its data and ran.
kill "$SPID"
wait "$SPID"
st=$?
SPID=
CHECKS=$((CHECKS + 1))
[ "$st" = 0 ] || fail "mdgpu-spin exited $st: $(cat "$TMP/spin.out")"
contains "$(cat "$TMP/spin.out")" "verified" "mdgpu-spin output"

# Clean shutdown removes the admin socket.
kill "$DPID"
wait "$DPID"
DPID=
CHECKS=$((CHECKS + 1))
[ -e "$ADMIN" ] && fail "admin socket left behind"

echo "test-mdgpuctl: $CHECKS checks, $FAILS failed"
[ "$FAILS" = 0 ]
