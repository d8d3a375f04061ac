#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR MIT
# demo-run.sh PARENT DAEMON_LOG DAEMON_PID CLIENT
#
# The body of `make demo` (scripts/demo.sh): with mdgpu.ko loaded and
# mdgpud serving PARENT on /dev/mdgpu (its log in DAEMON_LOG), create two
# vGPUs of different types (1g, 4g) with weights 1 and 3, run the same
# workload in both at once through the VFIO transport (CLIENT demo), print
# per vGPU type, weight, quota, memory used, GPU time and shares each
# second (from mdgpud's SIGUSR1 stats), change a weight live through sysfs
# and show the shares move; remove the vGPUs.  POSIX sh + awk (busybox in
# the guest).  MDGPU_DEMO_PATH says which path runs (sim guest or GPU host).
set -u
P=$1 LOG=$2 DPID=$3 CLIENT=$4
SECS=${MDGPU_DEMO_SECS:-8}
U1=${MDGPU_DEMO_U1:-6d677075-de30-4000-8000-00000000000a}
U2=${MDGPU_DEMO_U2:-6d677075-de30-4000-8000-00000000000b}
DEV=/sys/bus/mdev/devices
here=$(dirname "$0")
vgpu=$(command -v mdgpu-vgpu || echo "$here/../../qemu-scripts/mdgpu-vgpu")

snap() {	# snap FILE: the lines of a fresh SIGUSR1 status dump
	n0=$(grep -c ' status: ' "$LOG")
	kill -USR1 "$DPID"
	i=0
	while [ "$(grep -c ' status: ' "$LOG")" -le "$n0" ] && [ $i -lt 50 ]; do
		sleep 0.02
		i=$((i + 1))
	done
	sleep 0.05
	awk -v n="$n0" '/ status: /{ c++ } c > n' "$LOG" >"$1"
}
dvid() { sed -n "s/.* vgpu \([0-9]*\): mdev $1 .*/\1/p" "$LOG" | tail -n1; }
field() {	# field FILE VGPU gpu|fb|quota
	awk -v id="$2" -v k="$3" '
	$0 ~ " vgpu " id " type " {
		for (i = 1; i <= NF; i++) {
			if ($i == "gpu") gpu = $(i + 1)
			if ($i == "fb") { split($(i + 1), a, "/"); fb = a[1]; q = a[2] }
		}
		print (k == "gpu" ? gpu : k == "fb" ? fb : q); exit
	}' "$1"
}

echo "mdgpu demo: mdgpu.ko on $(uname -r), mdgpud on /dev/mdgpu (kernel transport), parent $P"
echo "path: ${MDGPU_DEMO_PATH:-unknown}"
"$vgpu" create "$P" 1g --uuid "$U1" --weight 1 >/dev/null || exit 1
"$vgpu" create "$P" 4g --uuid "$U2" --weight 3 >/dev/null || exit 1
sleep 0.3
A=$(dvid "$U1") B=$(dvid "$U2")
echo "vGPU A: mdev $U1, type mdgpu-1g, weight $(cat "$DEV/$U1/mdgpu/weight")"
echo "vGPU B: mdev $U2, type mdgpu-4g, weight $(cat "$DEV/$U2/mdgpu/weight")"
echo "both tenants run the same workload at once, each as a VFIO client (as QEMU"
echo "opens an mdev): copy 1 MiB in, 200 x 2 ms kernels, checksum verified vs C"
echo "share(N s): GPU-time share over the last interval (mdgpud stats);"
echo "share(phase): since the first table, or since the live weight change"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mdgpu-demo.XXXXXX")
export MDGPU_DEMO_STOP="$tmp/stop"
"$CLIENT" demo "$U1" 120 >"$tmp/a.log" 2>&1 &
ca=$!
"$CLIENT" demo "$U2" 120 >"$tmp/b.log" 2>&1 &
cb=$!
up() { cut -d' ' -f1 /proc/uptime; }
sleep 1
snap "$tmp/s0"
t0=$(up) tp=$t0
cp "$tmp/s0" "$tmp/first"
half=$((SECS / 2))
t=1
while [ $t -le $((SECS - 1)) ]; do
	sleep 1
	snap "$tmp/s1"
	tn=$(up)
	echo ""
	awk -v a="$t0" -v b="$tn" -v p="$tp" 'BEGIN {
		printf "t=%4.1fs vGPU  type  weight     quota  mem used  GPU time  share(%.1f s)  share(phase)\n", b - a, b - p }'
	tp=$tn
	for v in A B; do
		if [ $v = A ]; then id=$A o=$B u=$U1 ty=1g; else id=$B o=$A u=$U2 ty=4g; fi
		awk -v v="$v" -v ty="$ty" -v w="$(cat "$DEV/$u/mdgpu/weight")" \
		    -v q="$(field "$tmp/s1" "$id" quota)" -v f="$(field "$tmp/s1" "$id" fb)" \
		    -v g1="$(field "$tmp/s1" "$id" gpu)" -v g0="$(field "$tmp/s0" "$id" gpu)" \
		    -v o1="$(field "$tmp/s1" "$o" gpu)" -v o0="$(field "$tmp/s0" "$o" gpu)" \
		    -v gf="$(field "$tmp/first" "$id" gpu)" -v of="$(field "$tmp/first" "$o" gpu)" \
		    'BEGIN {
			d = (g1 - g0) + (o1 - o0); tot = (g1 - gf) + (o1 - of)
			printf "%9s  %-4s  %6s  %4d MiB  %4d MiB  %6.2f s  %10.1f %%  %10.1f %%\n",
				v, ty, w, q / 1048576, f / 1048576, g1 / 1e9,
				(d > 0 ? 100 * (g1 - g0) / d : 0),
				(tot > 0 ? 100 * (g1 - gf) / tot : 0) }'
	done
	cp "$tmp/s1" "$tmp/s0"
	if [ $t -eq $half ]; then
		snap "$tmp/s0"
		tp=$(up)
		echo 3 >"$DEV/$U1/mdgpu/weight"
		cp "$tmp/s0" "$tmp/first"
		echo ""
		echo ">>> live change: echo 3 > $DEV/$U1/mdgpu/weight  (A: 1 -> 3, expect 50/50)"
	fi
	t=$((t + 1))
done
touch "$MDGPU_DEMO_STOP"
wait $ca
ra=$?
wait $cb
rb=$?
echo ""
cat "$tmp/a.log" "$tmp/b.log"
"$vgpu" remove "$U1"
"$vgpu" remove "$U2"
rm -rf "$tmp"
[ $ra -eq 0 ] && [ $rb -eq 0 ]
