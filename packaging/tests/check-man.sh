#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# check-man.sh: `make check-man`, and a step of `make check-packaging`:
# the manual pages of Documentation/man/ and the bash completion
# (Documentation/README.md, "Manual pages"; Documentation/mdgpuctl.md,
# "Bash completion").  BUILD and TOP come from make, which has built
# build/man/, build/bash-completion/mdgpuctl, mdgpud, mdgpuctl and
# mdgpu-spin.
#
#  1. each page renders with no groff warning (groff -ww, after preconv,
#     as man-db runs it)
#  2. every option each program's --help prints is in its page's OPTIONS
#     (mdgpuctl's command options: in COMMANDS), every command of
#     mdgpuctl --help is a tag of COMMANDS
#  3. every key of daemon.md's configuration table (read here with awk,
#     not with config-keys.py) is a tag of mdgpud.conf.5's KEYS, and
#     config-keys.py fails, naming the file, without that table
#  4. the completion: bash -n, shellcheck; commands and options as --help
#     prints them, set's knobs, policies, -s and -c files (with a ':' in
#     the path, which bash splits off), mdgpud -o keys; mdev parents,
#     types, create's options and vGPU UUIDs from a fake sysfs tree; vGPU
#     ids from a running mdgpud; none, silently and within the -t bound,
#     from a socket that is absent or never answers
set -euo pipefail
: "${BUILD:?}" "${TOP:?}" "${PYTHON3:=python3}"
man="$BUILD/man"
compl="$BUILD/bash-completion/mdgpuctl"
t="$BUILD/man-check"
pass=0
ok() { pass=$((pass + 1)); echo "   ok: $*"; }
fail() { echo "check-man: FAIL: $*" >&2; exit 1; }
step() { echo "== check-man: $*"; }
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
}
trap cleanup EXIT
rm -rf "$t"
mkdir -p "$t"

step "manual pages render without warnings"
pages=(mdgpud.8 mdgpuctl.8 mdgpud.conf.5)
for p in "${pages[@]}"; do
	[ -s "$man/$p" ] || fail "$man/$p not built"
	zcat "$man/$p.gz" | cmp -s - "$man/$p" || fail "$man/$p.gz is not $p"
done
if command -v groff >/dev/null && command -v preconv >/dev/null; then
	for p in "${pages[@]}"; do
		groff -k -man -ww -z -Tutf8 "$man/$p" >"$t/warn" 2>&1 ||
			fail "groff $p exits $?"
		[ ! -s "$t/warn" ] || { cat "$t/warn"; fail "groff warns about $p"; }
		ok "groff -k -man -ww -z: $p, no warning"
	done
else
	echo "   SKIPPED: groff or preconv not installed (Debian: groff-base): pages not rendered, steps 2 and 3 skipped"
	groff_missing=1
fi

# text PAGE: the page as plain ASCII, one paragraph a line, no hyphenation.
text() {
	groff -k -man -Tascii -rLL=300n -rHY=0 -P-cbou "$man/$1" 2>/dev/null
}
# section PAGE NAME...: the text of those sections of PAGE.
section() {
	local page=$1
	shift
	text "$page" | awk -v names=" $* " '
		/^[A-Z][A-Z ]*$/ { f = index(names, " " $0 " ") > 0; next }
		f'
}
# tags: the tags (first words of .TP heads) of the section on stdin.
tags() { awk '/^       [^ ]/ { print $1 }'; }
# options: the options --help (stdin) names.
options() {
	grep -oE '(^|[][ ,;|(])--?[A-Za-z][A-Za-z0-9-]*' | sed 's/^[^-]*//' |
		sort -u
}
has_word() { grep -qE -- "(^|[^A-Za-z0-9-])$1([^A-Za-z0-9-]|\$)"; }

if [ -z "${groff_missing:-}" ]; then
	step "OPTIONS: every option of --help"
	for prog in mdgpud mdgpuctl; do
		"$BUILD/$prog" --help >"$t/$prog.help"
		sections=OPTIONS
		[ "$prog" = mdgpuctl ] && sections="OPTIONS COMMANDS"
		# shellcheck disable=SC2086 # one section name per word
		section "$prog.8" $sections >"$t/$prog.opts"
		[ -s "$t/$prog.opts" ] || fail "$prog.8 has no $sections"
		n=0
		for o in $(options <"$t/$prog.help"); do
			has_word "$o" <"$t/$prog.opts" ||
				fail "$prog --help prints $o, $prog.8's $sections do not"
			n=$((n + 1))
		done
		[ "$n" -ge 4 ] || fail "only $n options found in $prog --help"
		ok "$prog.8 $sections: the $n options of $prog --help"
	done
	awk '/^commands:/ { f = 1; next } /^[a-z]+:/ { f = 0 }
		f && /^  [a-z]/ { print $1 }' "$t/mdgpuctl.help" >"$t/commands"
	section mdgpuctl.8 COMMANDS | tags >"$t/command-tags"
	n=0
	while read -r c; do
		grep -qxF "$c" "$t/command-tags" ||
			fail "mdgpuctl --help lists $c, mdgpuctl.8's COMMANDS do not"
		n=$((n + 1))
	done <"$t/commands"
	[ "$n" -ge 10 ] || fail "only $n commands found in mdgpuctl --help"
	ok "mdgpuctl.8 COMMANDS: the $n commands of mdgpuctl --help"

	step "mdgpud.conf.5 KEYS: every key of daemon.md's table"
	awk '/^## Configuration$/ { f = 1; next } /^#/ { f = 0 }
		f && /^\| [a-z][a-z0-9_]* \|/ && $2 != "key" { print $2 }' \
		"$TOP/Documentation/daemon.md" >"$t/keys"
	section mdgpud.conf.5 KEYS | tags >"$t/key-tags"
	nkeys=$(wc -l <"$t/keys")
	[ "$nkeys" -ge 40 ] || fail "only $nkeys keys read from daemon.md"
	while read -r k; do
		grep -qxF "$k" "$t/key-tags" || fail "mdgpud.conf.5 lacks key $k"
	done <"$t/keys"
	ok "mdgpud.conf.5 KEYS: all $nkeys keys of Documentation/daemon.md"
fi
# A daemon.md whose table lost its header: the generator must fail loudly.
sed 's/^| key | default | meaning |$/| name | default | meaning |/' \
	"$TOP/Documentation/daemon.md" >"$t/daemon.md"
if echo @CONFIG_KEYS@ | "$PYTHON3" "$TOP/Documentation/man/config-keys.py" \
	--man "$t/daemon.md" >"$t/keys.out" 2>"$t/keys.err"; then
	fail "config-keys.py succeeded without the table"
fi
grep -q "daemon.md:[0-9]*: no table '| key | default | meaning |'" "$t/keys.err" ||
	{ cat "$t/keys.err"; fail "config-keys.py's message"; }
ok "config-keys.py fails without the table: $(cat "$t/keys.err")"

step "bash completion"
bash -n "$compl" || fail "bash -n $compl"
ok "bash -n $compl"
if command -v shellcheck >/dev/null; then
	shellcheck "$compl" || fail "shellcheck $compl"
	ok "shellcheck $compl"
else
	echo "   SKIPPED: shellcheck not installed: the completion not linted"
fi
[ "$(grep -c @CONFIG_KEYS@ "$compl")" -eq 0 ] || fail "$compl: keys not filled in"

# shellcheck source=/dev/null
. "$compl"
# comp FUNCTION LINE WORD...: what FUNCTION completes for the command
# line LINE, split by bash into the WORDs (the last one completed), as
# one line of sorted words.
comp() {
	local f=$1
	COMP_LINE=$2
	shift 2
	COMP_WORDS=("$@")
	COMP_CWORD=$(($# - 1))
	COMP_POINT=${#COMP_LINE}
	COMPREPLY=()
	"$f"
	[ ${#COMPREPLY[@]} -eq 0 ] || printf '%s\n' "${COMPREPLY[@]}" | sort | paste -sd ' '
}
# expect WANT FUNCTION LINE WORD...
expect() {
	local want=$1 got
	shift
	got=$(comp "$@")
	[ "$got" = "$want" ] || fail "completing '$2': got '$got', want '$want'"
	ok "'$2<TAB>' -> ${want:-nothing}"
}

"$BUILD/mdgpuctl" --help >"$t/mdgpuctl.help"
awk '/^commands:/ { f = 1; next } /^[a-z]+:/ { f = 0 }
	f && /^  [a-z]/ { print $1 }' "$t/mdgpuctl.help" | sort | paste -sd ' ' >"$t/want"
expect "$(cat "$t/want")" _mdgpuctl "mdgpuctl " mdgpuctl ""
sed -n '/^options:/,$p' "$t/mdgpuctl.help" | options | paste -sd ' ' >"$t/want"
expect "$(cat "$t/want")" _mdgpuctl "mdgpuctl -" mdgpuctl -
expect "serve-metrics set" _mdgpuctl "mdgpuctl se" mdgpuctl se
expect "cap priority weight" _mdgpuctl "mdgpuctl set 3 " mdgpuctl set 3 ""
expect "weight" _mdgpuctl "mdgpuctl -t 2 -s /x.sock set 3 w" \
	mdgpuctl -t 2 -s /x.sock set 3 w
expect "" _mdgpuctl "mdgpuctl set 3 cap " mdgpuctl set 3 cap ""
expect "best-effort equal-share fixed-share" _mdgpuctl "mdgpuctl policy " \
	mdgpuctl policy ""
expect "fixed-share" _mdgpuctl "mdgpuctl -j policy f" mdgpuctl -j policy f
expect "--json" _mdgpuctl "mdgpuctl list " mdgpuctl list ""
expect "-n" _mdgpuctl "mdgpuctl top -d 1 " mdgpuctl top -d 1 ""
expect "--listen" _mdgpuctl "mdgpuctl serve-metrics " mdgpuctl serve-metrics ""
expect "9400" _mdgpuctl "mdgpuctl serve-metrics --listen 127.0.0.1:" \
	mdgpuctl serve-metrics --listen 127.0.0.1 :
d="$t/files"
mkdir -p "$d/0000:41:00.0"
: >"$d/a.sock"
: >"$d/b.conf"
: >"$d/0000:41:00.0/mdgpud-admin.sock"
expect "$d/0000:41:00.0 $d/a.sock $d/b.conf" _mdgpuctl "mdgpuctl -s $d/" \
	mdgpuctl -s "$d/"
expect "$d/a.sock" _mdgpuctl "mdgpuctl -t 3 -s $d/a" mdgpuctl -t 3 -s "$d/a"
# bash splits the word at each ':' and replaces only what follows the last.
expect "00.0/mdgpud-admin.sock " _mdgpuctl "mdgpuctl -s $d/0000:41:00.0/md" \
	mdgpuctl -s "$d/0000" : 41 : 00.0/md
expect "00.0/" _mdgpuctl "mdgpuctl -s $d/0000:41:0" \
	mdgpuctl -s "$d/0000" : 41 : 0
expect "cap priority weight" _mdgpuctl \
	"mdgpuctl -s $d/0000:41:00.0/mdgpud-admin.sock set 1 " \
	mdgpuctl -s "$d/0000" : 41 : 00.0/mdgpud-admin.sock set 1 ""

# mdev parents (those with mdgpu types), types, create's options and the
# UUIDs of mdgpu vGPUs, from a fake sysfs tree (mdgpuctl's roots).
m="$t/mdev"
ua=6d677075-0000-4000-8000-0000000000a1
mkdir -p "$m/bus/0000:41:00.0/mdev_supported_types/mdgpu-1g" \
	"$m/bus/0000:41:00.0/mdev_supported_types/mdgpu-4g" \
	"$m/bus/other/mdev_supported_types/nvidia-35" "$m/dev/$ua/mdgpu" \
	"$m/dev/6d677075-0000-4000-8000-0000000000b2"
export MDGPU_SYSFS_MDEV_BUS="$m/bus" MDGPU_SYSFS_MDEV_DEVICES="$m/dev"
sorted() { printf '%s\n' "$@" | sort | paste -sd ' '; }
expect "0000:41:00.0" _mdgpuctl "mdgpuctl create " mdgpuctl create ""
expect "41:00.0" _mdgpuctl "mdgpuctl create 0000:" mdgpuctl create 0000 :
expect "$(sorted 1g 4g mdgpu-1g mdgpu-4g)" _mdgpuctl \
	"mdgpuctl create 0000:41:00.0 " mdgpuctl create 0000 : 41 : 00.0 ""
expect "" _mdgpuctl "mdgpuctl create other " mdgpuctl create other ""
expect "$(sorted --cap --mdevctl --priority --uuid)" _mdgpuctl \
	"mdgpuctl create 0000:41:00.0 1g --weight 3 " \
	mdgpuctl create 0000 : 41 : 00.0 1g --weight 3 ""
expect "" _mdgpuctl "mdgpuctl create 0000:41:00.0 1g --uuid " \
	mdgpuctl create 0000 : 41 : 00.0 1g --uuid ""
expect "$(sorted --json 0000:41:00.0)" _mdgpuctl "mdgpuctl types " \
	mdgpuctl types ""
expect "$ua" _mdgpuctl "mdgpuctl show " mdgpuctl show ""
expect "--json" _mdgpuctl "mdgpuctl show $ua " mdgpuctl show "$ua" ""
expect "--mdevctl" _mdgpuctl "mdgpuctl remove $ua " mdgpuctl remove "$ua" ""
expect "$ua" _mdgpuctl "mdgpuctl -s $t/none.sock set " \
	mdgpuctl -s "$t/none.sock" set ""
unset MDGPU_SYSFS_MDEV_BUS MDGPU_SYSFS_MDEV_DEVICES

"$BUILD/mdgpud" --help | options | paste -sd ' ' >"$t/want"
expect "$(cat "$t/want")" _mdgpud "mdgpud -" mdgpud -
expect "$d/b.conf" _mdgpud "mdgpud -c $d/b" mdgpud -c "$d/b"
expect "socket_group= socket_mode= socket_path=" _mdgpud "mdgpud -o socket_" \
	mdgpud -o socket_
expect "" _mdgpud "mdgpud -o socket_path=" mdgpud -o socket_path =
n=$(comp _mdgpud "mdgpud -o " mdgpud -o "" | wc -w)
[ "$n" -eq "$(wc -l <"$t/keys")" ] ||
	fail "mdgpud -o <TAB>: $n keys, daemon.md has $(wc -l <"$t/keys")"
ok "'mdgpud -o <TAB>' -> the $n keys of daemon.md"

# vGPU ids: no daemon, a socket that never answers, a real daemon.
ctl="$BUILD/mdgpuctl"
got=$(comp _mdgpuctl "$ctl -s $t/none.sock set " "$ctl" -s "$t/none.sock" set "" 2>&1)
[ -z "$got" ] || fail "set <TAB> without a daemon printed or offered '$got'"
ok "'set <TAB>' without a daemon -> nothing, silently"
"$PYTHON3" -c 'import socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1])
s.listen(8)
time.sleep(60)' "$t/mute.sock" &
pids+=($!)
for _ in $(seq 50); do [ -S "$t/mute.sock" ] && break; sleep 0.1; done
SECONDS=0
got=$(comp _mdgpuctl "$ctl -s $t/mute.sock set " "$ctl" -s "$t/mute.sock" set "" 2>&1)
[ -z "$got" ] || fail "set <TAB> with a mute daemon printed or offered '$got'"
[ "$SECONDS" -le 3 ] || fail "set <TAB> with a mute daemon took ${SECONDS} s"
ok "'set <TAB>' with a socket that never answers -> nothing, silently, in ${SECONDS} s"

"$BUILD/mdgpud" -c /dev/null -o backend=sim -o socket_path="$t/d.sock" \
	-o log_level=warn 2>"$t/mdgpud.err" &
pids+=($!)
for _ in $(seq 50); do [ -S "$t/d-admin.sock" ] && break; sleep 0.1; done
"$BUILD/mdgpu-spin" -s "$t/d.sock" -m 16 -d 20 >"$t/spin.out" 2>&1 &
pids+=($!)
"$BUILD/mdgpu-spin" -s "$t/d.sock" -m 16 -d 20 >"$t/spin2.out" 2>&1 &
pids+=($!)
for _ in $(seq 100); do
	[ "$("$ctl" -s "$t/d-admin.sock" list 2>/dev/null | wc -l)" -ge 2 ] && break
	sleep 0.1
done
want=$("$ctl" -s "$t/d-admin.sock" list | sed 's/^id=\([0-9]*\) .*/\1/' |
	sort | paste -sd ' ')
[ "$(echo "$want" | wc -w)" -eq 2 ] ||
	{ cat "$t/mdgpud.err" "$t/spin.out"; fail "two vGPUs expected, list: '$want'"; }
expect "$want" _mdgpuctl "$ctl -s $t/d-admin.sock set " \
	"$ctl" -s "$t/d-admin.sock" set ""
MDGPU_ADMIN_SOCKET="$t/d-admin.sock" expect "$want" _mdgpuctl "$ctl set " \
	"$ctl" set ""
cleanup
pids=()

echo "check-man: $pass checks passed"
