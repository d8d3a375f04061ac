#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# tests/nested/test-boot-outer.sh: the nested runners' decision to boot
# once more (tests/nested/boot-outer.sh), without booting anything.
#
# testdata/ci-double-fault.serial.txt is the console of a CI run of
# run-nested.sh on 6.12 whose inner kernel took a double fault in
# kmem_cache_alloc_noprof under execve, before mdgpu-guest.ko was loaded
# (no mdgpu frame).  The other consoles are made from it here: the same
# crash with an mdgpu frame, with an mdgpu RIP, after an mdgpu WARNING,
# with mdgpu-guest.ko merely loaded, without a trace, before the inner
# /init, in a run that passed.  nested_boot_outer itself runs with a
# qemu-system-x86_64 on PATH that prints those consoles in turn, to count
# the boots.  Then the inner CPU model per kernel (nested_inner_cpu).
# Prints "N passed, N failed"; exits non-zero on a failure.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/nested/boot-outer.sh
. "$here/boot-outer.sh"
ci=$here/testdata/ci-double-fault.serial.txt
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mdgpu-test-boot-outer.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
npass=0 nfail=0
ok() { echo "PASS: $1"; npass=$((npass + 1)); }
bad() { echo "FAIL: $1: $2"; nfail=$((nfail + 1)); }

# expect NAME LOG RC WANT: WANT is "retry: <reason prefix>" or "no".
expect() {
	local name=$1 log=$2 rc=$3 want=$4 why
	if why=$(nested_retry_reason "$log" "$rc"); then
		case $want in
		"retry: "*)
			case $why in
			"${want#retry: }"*) ok "$name" ;;
			*) bad "$name" "reason '$why', expected '${want#retry: }...'" ;;
			esac ;;
		*) bad "$name" "retried ($why), expected no retry" ;;
		esac
	elif [ "$want" = no ]; then
		ok "$name"
	else
		bad "$name" "not retried, expected $want"
	fi
}

# The consoles.
cp "$ci" "$tmp/ci.txt"
sed 's/^inner| \(\[ *[0-9.]*\]\)  elf_load+0x236\/0x260$/inner| \1  mdgpu_gdev_submit+0x236\/0x260 [mdgpu_guest]/' \
	"$ci" >"$tmp/frame.txt"
sed '0,/RIP: 0010:kmem_cache_alloc_noprof+0xc3\/0x2f0/s//RIP: 0010:mdgpu_gdev_irq+0xc3\/0x2f0 [mdgpu_guest]/' \
	"$ci" >"$tmp/rip.txt"
sed 's/^\(inner| \[ *[0-9.]*\] Modules linked in:\)$/\1 mdgpu_guest(O)/' \
	"$ci" >"$tmp/loaded.txt"
awk '/traps: PANIC: double fault/ && !done {
	print "inner| [   80.100000] WARNING: CPU: 0 PID: 150 at chardev.c:240 mdgpu_gdev_reset_state+0x40/0x60 [mdgpu_guest]"
	print "inner| [   80.100100] Call Trace:"
	print "inner| [   80.100200]  <TASK>"
	print "inner| [   80.100300]  mdgpu_gdev_sleep+0x50/0x120 [mdgpu_guest]"
	print "inner| [   80.100400]  </TASK>"
	print "inner| [   80.100500] ---[ end trace 0000000000000000 ]---"
	done = 1
} { print }' "$ci" >"$tmp/warn.txt"
grep -vE '^inner\| \[ *[0-9.]+\] ' "$ci" >"$tmp/nocrash.txt"
grep -vE '^inner\| \[ *[0-9.]+\] ' "$ci" | sed '/^inner| nested-inner: booted/a\
inner| [   81.561545] Kernel panic - not syncing: Attempted to kill init! exitcode=0x0000000b' \
	>"$tmp/notrace.txt"
sed 's/^6 passed, 2 failed$/8 passed, 0 failed/' "$ci" >"$tmp/passed.txt"
grep -v '^inner| nested-inner: ' "$ci" | grep -v '^inner|     0000:' >"$tmp/preinit.txt"
grep -v '^inner| nested-inner: ' "$tmp/frame.txt" | grep -v '^inner|     0000:' \
	>"$tmp/preinit-mdgpu.txt"
grep -vE '^inner\| ' "$ci" | sed '/^nested-outer: inner QEMU exit/i\
inner-regs| RIP=ffffffff81a3c2d0 RFL=00000246\
nested-outer: inner kernel hung before its /init (no "nested-inner: booted" in 300s); inner QEMU killed' \
	>"$tmp/hung.txt"
# The crash in the OUTER kernel's console (no "inner| "): not the inner's.
sed 's/^inner| \(\[ *[0-9.]*\] \)/\1/' "$ci" >"$tmp/outer.txt"

expect ci-double-fault "$tmp/ci.txt" 0 \
	"retry: inner guest kernel crashed outside mdgpu (double fault)"
expect mdgpu-frame "$tmp/frame.txt" 0 no
expect mdgpu-rip "$tmp/rip.txt" 0 no
expect mdgpu-warning-before "$tmp/warn.txt" 0 no
expect module-loaded-trace-outside "$tmp/loaded.txt" 0 \
	"retry: inner guest kernel crashed outside mdgpu (double fault)"
expect no-crash "$tmp/nocrash.txt" 0 no
expect panic-without-trace "$tmp/notrace.txt" 0 no
expect crash-but-passed "$tmp/passed.txt" 0 no
expect crash-passed-but-qemu-failed "$tmp/passed.txt" 1 \
	"retry: inner guest kernel crashed outside mdgpu (double fault)"
expect before-init-panic "$tmp/preinit.txt" 0 \
	"retry: the inner kernel failed before its /init"
expect before-init-panic-mdgpu "$tmp/preinit-mdgpu.txt" 0 no
expect before-init-hang "$tmp/hung.txt" 0 \
	"retry: the inner kernel failed before its /init"
expect outer-kernel-crash "$tmp/outer.txt" 0 no

what=$(nested_inner_crash "$tmp/frame.txt")
case $what in
"mdgpu "*"mdgpu_gdev_submit+0x236/0x260 [mdgpu_guest]") ok classify-names-frame ;;
*) bad classify-names-frame "got '$what'" ;;
esac
what=$(nested_inner_crash "$tmp/notrace.txt")
if [ "$what" = "no-trace panic" ]; then
	ok classify-no-trace
else
	bad classify-no-trace "got '$what'"
fi

# nested_boot_outer with a fake QEMU that prints console N at boot N.
mkdir -p "$tmp/bin"
cat >"$tmp/bin/qemu-system-x86_64" <<'QEMU'
#!/bin/sh
n=$(($(cat "$FAKE_DIR/boots") + 1))
echo "$n" >"$FAKE_DIR/boots"
cat "$FAKE_DIR/console.$n"
QEMU
chmod +x "$tmp/bin/qemu-system-x86_64"

# boots NAME WANT_BOOTS WANT_ATTEMPT1(0|1) CONSOLE...
boots() {
	local name=$1 want=$2 want_a1=$3 i=1 got a1=0 err
	shift 3
	rm -rf "$tmp/fake" && mkdir -p "$tmp/fake"
	echo 0 >"$tmp/fake/boots"
	for c in "$@"; do cp "$c" "$tmp/fake/console.$i"; i=$((i + 1)); done
	err=$(FAKE_DIR=$tmp/fake PATH=$tmp/bin:$PATH nested_boot_outer nested \
		6.12-test /nonexistent /nonexistent "$tmp/fake/serial.log" 60 \
		50 max 2>&1 >/dev/null)
	got=$(cat "$tmp/fake/boots")
	[ ! -f "$tmp/fake/serial.log.attempt1.txt" ] || a1=1
	if [ "$got" -ne "$want" ] || [ "$a1" -ne "$want_a1" ]; then
		bad "$name" "$got boots (expected $want), attempt1 kept: $a1; said: $err"
	elif [ "$want" -eq 2 ] && ! echo "$err" | grep -q 'retrying once'; then
		bad "$name" "retried without saying so: $err"
	elif [ "$want_a1" -eq 1 ] &&
	     ! cmp -s "$tmp/fake/serial.log.attempt1.txt" "$1"; then
		bad "$name" "attempt1 is not the first console"
	else
		ok "$name"
	fi
}
boots boot-twice-then-fail 2 1 "$tmp/ci.txt" "$tmp/ci.txt" "$tmp/ci.txt"
boots boot-twice-then-pass 2 1 "$tmp/ci.txt" "$tmp/passed.txt"
boots boot-once-mdgpu 1 0 "$tmp/frame.txt" "$tmp/ci.txt"
boots boot-once-passed 1 0 "$tmp/passed.txt" "$tmp/ci.txt"

# The inner CPU model per kernel, and the override.
cpu() {
	local name=$1 want=$2 got
	got=$(nested_inner_cpu "$3")
	if [ "$got" = "$want" ]; then ok "$name"; else
		bad "$name" "'$got', expected '$want'"; fi
}
cpu inner-cpu-6.1 qemu64 6.1.0-57-amd64
cpu inner-cpu-6.12 max,-cx16 6.12.118+deb12-amd64
NESTED_INNER_CPU=max cpu inner-cpu-override max 6.12.118+deb12-amd64

echo "$npass passed, $nfail failed"
[ "$nfail" -eq 0 ]
