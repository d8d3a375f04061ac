#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# mdgpuctl against a real build/mdgpud (sim backend) on a temporary socket:
# every command, its output, and every exit status mdgpuctl documents;
# metrics checked by promtool and against list, --json, top, and the
# serve-metrics HTTP endpoint with bad and stalled clients.
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
HPID=
FAILS=0
CHECKS=0

cleanup() {
	[ -n "$HPID" ] && kill "$HPID" 2>/dev/null && wait "$HPID" 2>/dev/null
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

# metrics: valid Prometheus text that agrees with list.
# metric NAME: the value of the sample of NAME in $MET for vGPU $ID.
metric() {
	sed -n "s/^$1{.*vgpu_id=\"$ID\"[^}]*} \([0-9.]*\)$/\1/p" <<<"$MET"
}
# ns_of SECONDS: "12.345678901" -> 12345678901
ns_of() { local s=${1%.*} f=${1#*.}; echo $((10#$s * 1000000000 + 10#$f)); }
check_metrics() { # check_metrics FILE WHAT: promtool accepts it
	CHECKS=$((CHECKS + 1))
	if ! command -v promtool >/dev/null; then
		fail "$2: promtool missing (Debian's prometheus package, scripts/install-deps.sh)"
	elif ! promtool check metrics <"$1" >"$TMP/promtool" 2>&1; then
		fail "$2: promtool check metrics: $(cat "$TMP/promtool")"
	fi
}
kv() { sed -n "s/.*\<$1=\([^ ]*\).*/\1/p" <<<"$2"; }
expect 0 "$CTL" -s "$ADMIN" list
L1=$OUT
expect 0 "$CTL" -s "$ADMIN" metrics
MET=$OUT
printf '%s\n' "$MET" >"$TMP/metrics"
expect 0 "$CTL" -s "$ADMIN" list
L2=$OUT
check_metrics "$TMP/metrics" "mdgpuctl metrics"
contains "$MET" "# TYPE mdgpu_vgpu_queue_wait_seconds histogram" histogram
contains "$MET" "mdgpu_vgpus{gpu=\"0\",bus_id=\"sim0\"} 1" "vgpus gauge"
contains "$MET" "vgpu_id=\"$ID\",mdev_uuid=\"\",type=\"2g\"" "labels"
contains "$L1" "mdev_uuid=-" "socket vGPUs have no mdev UUID"
for pair in fb_quota:fb_quota_bytes fb_used:fb_used_bytes \
	allocations:allocations weight:weight priority:priority \
	resets:resets_total; do
	CHECKS=$((CHECKS + 1))
	a=$(kv "${pair%%:*}" "$L1")
	b=$(metric "mdgpu_vgpu_${pair#*:}")
	if [ -z "$a" ] || [ "$a" != "$b" ]; then
		fail "list ${pair%%:*}=$a but metrics ${pair#*:} '$b'"
	fi
done
contains "$(metric mdgpu_vgpu_cap_ratio)" "0.50" "cap 50 as a ratio"
# Counters read between two lists lie between their values.
for pair in commands:commands_total slices:slices_total \
	gpu_ns:gpu_seconds_total; do
	CHECKS=$((CHECKS + 1))
	a=$(kv "${pair%%:*}" "$L1")
	c=$(kv "${pair%%:*}" "$L2")
	b=$(metric "mdgpu_vgpu_${pair#*:}")
	[ "${pair%%:*}" = gpu_ns ] && [ -n "$b" ] && b=$(ns_of "$b")
	if [ -z "$b" ] || [ "$a" -gt "$b" ] || [ "$b" -gt "$c" ]; then
		fail "metrics ${pair#*:} '$b' not within list's $a..$c"
	fi
done
CHECKS=$((CHECKS + 1))
b=$(sed -n "s/^mdgpu_vgpu_queue_wait_seconds_count{.*vgpu_id=\"$ID\".*} //p" <<<"$MET")
a=$(kv commands "$L1")
if [ -z "$b" ] || [ "$b" -lt "$a" ]; then
	fail "wait histogram count '$b' < commands $a"
fi
# _sum: the waits of those commands added, each more than 0 ns.
CHECKS=$((CHECKS + 1))
c=$(metric mdgpu_vgpu_queue_wait_seconds_sum)
if [ -z "$c" ] || [ "$(ns_of "$c")" -lt "$b" ]; then
	fail "wait histogram sum '$c' s for $b waits"
fi
# The Grafana dashboard asks only for families the daemon exports.
DASH=$(dirname "$0")/../Documentation/grafana/mdgpu-dashboard.json
CHECKS=$((CHECKS + 1))
python3 -m json.tool "$DASH" >/dev/null || fail "dashboard is not JSON"
while read -r name; do
	CHECKS=$((CHECKS + 1))
	grep -q "^# TYPE ${name%_bucket} " <<<"$MET" ||
		fail "dashboard uses $name, not in metrics"
done < <(grep -o 'mdgpu_[a-z_]*' "$DASH" | sort -u)
expect 0 "$CTL" -s "$ADMIN" help && contains "$OUT" "metrics" "help names metrics"
expect 2 "$CTL" -s "$ADMIN" metrics extra

# --json: the same key=value data, numbers as numbers.
json_ok() { # json_ok WHAT PYTHON-CHECK: $OUT parses and the check holds
	CHECKS=$((CHECKS + 1))
	python3 -c "import json, sys; d = json.load(sys.stdin); assert $2, d" \
		<<<"$OUT" >"$TMP/py" 2>&1 || fail "$1: $(cat "$TMP/py") in '$OUT'"
}
expect 0 "$CTL" -s "$ADMIN" list --json &&
	json_ok "list --json" "[v for v in d if v['id'] == $ID and v['type'] == '2g' and v['fb_quota'] == $(kv fb_quota "$L1") and v['weight'] == 5 and v['context'] == 'ok']"
CHECKS=$((CHECKS + 1))
python3 -m json.tool <<<"$OUT" >/dev/null || fail "list --json: json.tool"
expect 0 "$CTL" -s "$ADMIN" --json stats &&
	json_ok "stats --json" "d['vgpus'] == 1 and d['policy'] == 'equal-share' and d['gpu'] == 'mdgpu_sim' and d['bus_id'] == 'sim0' and d['mdev_parent'] == '-'"
expect 0 "$CTL" -s "$ADMIN" -j uids &&
	json_ok "uids --json" "isinstance(d, list) and all(isinstance(u['uid'], int) for u in d)"
expect 0 "$CTL" -s "$ADMIN" version --json &&
	json_ok "version --json" "d['protocol'] == 1 and isinstance(d['abi'], str)"
expect 2 "$CTL" -s "$ADMIN" set "$ID" weight 5 --json
expect 2 "$CTL" -s "$ADMIN" --json set "$ID" weight 5
expect 2 "$CTL" -s "$ADMIN" list --json extra

# top: -n frames, then exit; every frame has the vGPU with its utilisation.
expect 0 "$CTL" -s "$ADMIN" top -d 0.3 -n 2
CHECKS=$((CHECKS + 1))
[ "$(grep -c '^mdgpuctl top ' <<<"$OUT")" = 2 ] || fail "top -n 2: frames in '$OUT'"
CHECKS=$((CHECKS + 1))
[ "$(awk -v id="$ID" '$1 == id && $2 == "2g" && $6 + 0 > 0 { n++ } END { print n + 0 }' <<<"$OUT")" = 2 ] ||
	fail "top: no utilisation of vgpu $ID in both frames: '$OUT'"
contains "$OUT" "UTIL%" "top header"
contains "$OUT" "at sim0 (sim)" "top names the GPU's bus id"
contains "$OUT" "MDEV_UUID" "top has the mdev UUID column"
expect 2 "$CTL" -s "$ADMIN" top -n 0
expect 2 "$CTL" -s "$ADMIN" top -d 0.01
expect 2 "$CTL" -s "$ADMIN" top -n 1.5
expect 2 "$CTL" -s "$ADMIN" top -x
expect 3 "$CTL" -s "$TMP/nope.sock" top -n 1

# serve-metrics: GET /metrics over HTTP, bad requests refused.
expect 2 "$CTL" -s "$ADMIN" serve-metrics --listen localhost:9400
expect 2 "$CTL" -s "$ADMIN" serve-metrics --listen 127.0.0.1:0
expect 2 "$CTL" -s "$ADMIN" serve-metrics --listen 127.0.0.1:65536
expect 2 "$CTL" -s "$ADMIN" serve-metrics --listen 127.0.0.1
expect 2 "$CTL" -s "$ADMIN" serve-metrics extra
for _ in 1 2 3 4 5; do
	PORT=$((20000 + RANDOM % 40000))
	"$CTL" -s "$ADMIN" serve-metrics --listen "127.0.0.1:$PORT" \
		2>"$TMP/serve.err" &
	HPID=$!
	sleep 0.3
	kill -0 "$HPID" 2>/dev/null && break
	wait "$HPID"
	HPID=
done
[ -n "$HPID" ] || { echo "FAIL: serve-metrics could not listen: $(cat "$TMP/serve.err")"; exit 1; }
URL=http://127.0.0.1:$PORT
http() { # http EXPECTED-STATUS CURL-ARGS...: status checked, body in $OUT
	local want=$1 got
	shift
	CHECKS=$((CHECKS + 1))
	got=$(curl -s -o "$TMP/body" -w '%{http_code}' --max-time 20 "$@")
	OUT=$(cat "$TMP/body")
	[ "$got" = "$want" ] || fail "curl $* -> $got, expected $want"
}
http 200 "$URL/metrics"
printf '%s\n' "$OUT" >"$TMP/http-metrics"
check_metrics "$TMP/http-metrics" "GET /metrics"
contains "$OUT" "mdgpu_vgpu_fb_quota_bytes{gpu=\"0\",bus_id=\"sim0\",vgpu_id=\"$ID\"" "http body"
CHECKS=$((CHECKS + 1))
curl -s -D - -o /dev/null "$URL/metrics" |
	grep -qi '^Content-Type: text/plain; version=0.0.4' ||
	fail "GET /metrics: content type"
http 404 "$URL/"
http 404 "$URL/metrics/x"
http 405 -X POST -d x "$URL/metrics"
http 405 -X DELETE "$URL/metrics"
http 431 -H "X-Big: $(head -c 9000 /dev/zero | tr '\0' a)" "$URL/metrics"
# Raw requests curl will not send: checked by their status line.
cat >"$TMP/raw.py" <<'EOF'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=15)
s.sendall(eval(sys.argv[2]))
data = b""
while True:
    b = s.recv(65536)
    if not b:
        break
    data += b
head, _, body = data.partition(b"\r\n\r\n")
print(head.split(b"\r\n")[0].decode("ascii", "replace"), "body=%d" % len(body))
EOF
raw() { # raw EXPECTED-STATUS-LINE-PREFIX PYTHON-BYTES
	local got
	CHECKS=$((CHECKS + 1))
	got=$(python3 "$TMP/raw.py" "$PORT" "$2" 2>&1)
	case $got in "$1"*) ;; *) fail "raw $2 -> '$got', expected '$1'" ;; esac
}
raw "HTTP/1.0 400" 'b"GET /metrics\r\n\r\n"'
raw "HTTP/1.0 400" 'b"GET /metrics HTTP/1.0\r\nX: \x00\r\n\r\n"'
raw "HTTP/1.0 400" 'b"\xff\xfe garbage \r\n\r\n"'
raw "HTTP/1.0 505" 'b"GET /metrics HTTP/2.0\r\n\r\n"'
raw "HTTP/1.0 200" 'b"GET /metrics HTTP/1.0\n\n"'
raw "HTTP/1.0 200 OK body=0" 'b"HEAD /metrics HTTP/1.1\r\nHost: x\r\n\r\n"'
# Eight clients that never finish their request hold every slot; their
# deadline (10 s) frees the slots and a scrape still gets through.
cat >"$TMP/stall.py" <<'EOF'
import socket, sys, time
idle = [socket.create_connection(("127.0.0.1", int(sys.argv[1])))
        for _ in range(8)]
for s in idle:
    s.sendall(b"GET /metr")
time.sleep(15)
EOF
python3 "$TMP/stall.py" "$PORT" &
IPID=$!
sleep 0.5
T0=$(date +%s)
http 200 "$URL/metrics"
T1=$(date +%s)
CHECKS=$((CHECKS + 1))
[ $((T1 - T0)) -le 12 ] || fail "scrape behind 8 stalled clients took $((T1 - T0)) s"
kill "$IPID" 2>/dev/null
wait "$IPID" 2>/dev/null
CHECKS=$((CHECKS + 1))
kill -0 "$HPID" 2>/dev/null || fail "serve-metrics died: $(cat "$TMP/serve.err")"

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

# With no daemon the endpoint says so (503) and keeps serving.
http 503 "$URL/metrics" && contains "$OUT" "cannot connect" "503 body"
CHECKS=$((CHECKS + 1))
kill -0 "$HPID" 2>/dev/null || fail "serve-metrics died without its daemon"
kill "$HPID"
wait "$HPID" 2>/dev/null
HPID=

echo "test-mdgpuctl: $CHECKS checks, $FAILS failed"
[ "$FAILS" = 0 ]
