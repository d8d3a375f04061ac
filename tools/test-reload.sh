#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# SIGHUP reload of a real build/mdgpud (sim backend) started with a config
# file and -o overrides: the live keys (policy, timeslice_us) change, a
# restart-only key (max_vgpus) keeps its value and is logged by name, -o
# still wins over the file, a connected tenant keeps running; an invalid
# file changes nothing and its error names file, line and key.  Under a
# stand-in $NOTIFY_SOCKET each reload sends RELOADING=1 with
# MONOTONIC_USEC, then READY=1 with STATUS=reloaded: <what changed> or
# STATUS=reload failed: <reason>.  Needs BUILD (make check-daemon sets it).
set -u

BUILD=${BUILD:-$(cd "$(dirname "$0")/.." && pwd)/build}
CTL=$BUILD/mdgpuctl
SPIN=$BUILD/mdgpu-spin
TMP=$(mktemp -d /tmp/mdgpud-reload.XXXXXX)
CONF=$TMP/mdgpud.conf
SOCK=$TMP/mdgpud.sock
ADMIN=$TMP/mdgpud-admin.sock
LOG=$TMP/mdgpud.log
NOTES=$TMP/notify.out
DPID=
SPID=
NPID=
FAILS=0
CHECKS=0

cleanup() {
	[ -n "$SPID" ] && kill "$SPID" 2>/dev/null && wait "$SPID" 2>/dev/null
	[ -n "$DPID" ] && kill "$DPID" 2>/dev/null && wait "$DPID" 2>/dev/null
	[ -n "$NPID" ] && kill "$NPID" 2>/dev/null && wait "$NPID" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT

fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }
check() { # check WHAT CMD...: CMD must succeed
	local what=$1
	shift
	CHECKS=$((CHECKS + 1))
	"$@" || fail "$what"
}
stats() { "$CTL" -s "$ADMIN" stats; }
# until_log PATTERN: wait (5 s at most) for the daemon's log to match.
until_log() {
	for _ in $(seq 100); do
		grep -q -- "$1" "$LOG" && return 0
		sleep 0.05
	done
	return 1
}

# Every datagram on $NOTIFY_SOCKET, one a line, newlines as '|'.
python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
with open(sys.argv[2], "w") as f:
    while True:
        f.write(s.recv(4096).decode().replace("\n", "|") + "\n")
        f.flush()
' "$TMP/notify" "$NOTES" &
NPID=$!
for _ in $(seq 100); do [ -S "$TMP/notify" ] && break; sleep 0.05; done

cat >"$CONF" <<EOF
policy = best-effort
timeslice_us = 2000
max_vgpus = 16
log_level = warn
EOF
NOTIFY_SOCKET=$TMP/notify "$BUILD/mdgpud" -c "$CONF" -o sim_realtime=0 \
	-o "socket_path=$SOCK" -o log_level=info 2>"$LOG" &
DPID=$!
for _ in $(seq 200); do [ -S "$ADMIN" ] && break; sleep 0.05; done
[ -S "$ADMIN" ] || { echo "FAIL: mdgpud did not create $ADMIN"; exit 1; }
OUT=$(stats)
check "start: $OUT" grep -q "policy=best-effort timeslice_us=2000 " <<<"$OUT"
check "start: $OUT" grep -q " max_vgpus=16 " <<<"$OUT"

# A tenant that runs across both reloads.
"$SPIN" -s "$SOCK" -T 1g -m 8 -d 3 >"$TMP/spin.out" 2>&1 &
SPID=$!
for _ in $(seq 200); do
	"$CTL" -s "$ADMIN" list 2>/dev/null | grep -q "type=1g " && break
	sleep 0.05
done

# Live keys change, max_vgpus needs a restart, -o log_level=info wins.
cat >"$CONF" <<EOF
policy = equal-share
timeslice_us = 3000
cap_window_us = 250000
linger_us = 120
max_vgpus = 8
log_level = debug
EOF
kill -HUP "$DPID"
check "no reload logged" until_log "reload: max_vgpus changed: needs a restart"
OUT=$(stats)
check "after reload: $OUT" \
	grep -q "vgpus=1 max_vgpus=16 .*policy=equal-share timeslice_us=3000 cap_window_us=250000 " \
	<<<"$OUT"
check "policy applied not logged" grep -q "reload: policy applied" "$LOG"
check "timeslice_us applied not logged" \
	grep -q "reload: timeslice_us applied" "$LOG"
check "cap_window_us applied not logged" \
	grep -q "reload: cap_window_us applied" "$LOG"
check "linger_us applied not logged" grep -q "reload: linger_us applied" "$LOG"
CHECKS=$((CHECKS + 1))
grep -q "log_level\|debug:" "$LOG" && fail "-o log_level=info lost to the file"
CHECKS=$((CHECKS + 1))
[ "$(grep -c "needs a restart" "$LOG")" = 1 ] ||
	fail "restart-only keys: $(grep "needs a restart" "$LOG")"

# An invalid file: an error naming file, line and key; nothing changes.
printf 'policy = best-effort\ntimeslice_us = 4000\npolicy = sometimes\n' \
	>"$CONF"
kill -HUP "$DPID"
check "invalid file: no error logged" \
	until_log "err: reload: $CONF:3: bad value 'sometimes' for 'policy'; the running configuration is unchanged"
OUT=$(stats)
check "after invalid reload: $OUT" \
	grep -q "max_vgpus=16 .*policy=equal-share timeslice_us=3000 " <<<"$OUT"

# An unreadable file: the same.
rm "$CONF"
kill -HUP "$DPID"
check "missing file: no error logged" until_log "err: reload: open $CONF: "
OUT=$(stats)
check "after missing file: $OUT" \
	grep -q "policy=equal-share timeslice_us=3000 " <<<"$OUT"

# The tenant ran its whole time and verified its data.
wait "$SPID"
st=$?
SPID=
CHECKS=$((CHECKS + 1))
[ "$st" = 0 ] || fail "mdgpu-spin exited $st: $(cat "$TMP/spin.out")"
check "mdgpu-spin did not verify: $(cat "$TMP/spin.out")" \
	grep -q verified "$TMP/spin.out"

kill "$DPID"
wait "$DPID"
st=$?
DPID=
CHECKS=$((CHECKS + 1))
[ "$st" = 0 ] || fail "mdgpud exited $st: $(cat "$LOG")"

# READY=1; per reload RELOADING=1 with MONOTONIC_USEC, then READY=1 with
# STATUS= saying what it did: the good reload's keys, each bad one's
# reason and that the daemon keeps its configuration.
for _ in $(seq 100); do grep -q STOPPING=1 "$NOTES" && break; sleep 0.05; done
re='^RELOADING=1[|]MONOTONIC_USEC=[1-9][0-9]*$'
CHECKS=$((CHECKS + 1))
if ! awk -v re="$re" '
	NR == 1 { ok = $0 == "READY=1"; next }
	NR <= 7 { ok = ok && (NR % 2 ? $0 ~ /^READY=1[|]STATUS=/ : $0 ~ re); next }
	NR == 8 { ok = ok && $0 == "STOPPING=1"; next }
	{ ok = 0 }
	END { exit !(ok && NR == 8) }' "$NOTES"; then
	fail "notifications: $(cat "$NOTES")"
fi
status() { sed -n "${1}s/^READY=1|STATUS=//p" "$NOTES"; }
OUT=$(status 3)
check "good reload's STATUS: $OUT" grep -qx \
	"reloaded: applied [a-z_ ]*; needs a restart: max_vgpus" <<<"$OUT"
for k in policy timeslice_us cap_window_us linger_us; do
	check "good reload's STATUS lacks $k: $OUT" \
		grep -q "applied .*\b$k\b.*;" <<<"$OUT"
done
OUT=$(status 5)
check "invalid file's STATUS: $OUT" grep -qxF \
	"reload failed: $CONF:3: bad value 'sometimes' for 'policy'; running on the previous configuration" \
	<<<"$OUT"
OUT=$(status 7)
check "missing file's STATUS: $OUT" grep -qx \
	"reload failed: open $CONF: .*; running on the previous configuration" \
	<<<"$OUT"

[ "$FAILS" = 0 ] || cat "$LOG"
echo "test-reload: $CHECKS checks, $FAILS failed"
[ "$FAILS" = 0 ]
