# shellcheck shell=sh
# SPDX-License-Identifier: GPL-2.0 OR MIT
# tests/e2e/guest-daemon.sh: sourced (busybox sh) by the /init of the e2e
# guest (tests/e2e/init) and of the nested e2e's outer guest
# (tests/e2e/nested-outer-init), where it is /bin/mdgpu-guest-daemon.sh:
# the daemons those guests start, mdgpud and Debian's libvirtd.
#
# guest_daemon_start BACKEND LOG [OPTION...]
#   Starts /bin/mdgpud on the kernel transport in the background, its log
#   appended to LOG, DPID its pid, OPTIONs (e.g. -o parent_pci=...) after
#   the backend's, and waits up to 30 s for this start's "dispatcher
#   running".  BACKEND sim: the sim backend's 16384 MiB in real time.
#   BACKEND cuda: the cuda backend over CI's fake libcuda.so.1 (host
#   memory standing in for the GPU; 17409 MiB with the fake's 1 GiB in
#   use, minus the 1 MiB reserve, is the sim's 16384 MiB, which mdgpu.ko
#   requires of a daemon that re-attaches its vGPUs), its workers
#   sandboxed as far as the guest allows, a hang bound of 60 s (the
#   fake's "GPU" is the TCG guest's CPU: scrubbing a 1 GiB allocation
#   takes seconds).  Returns 0 once running, 1 otherwise.
# guest_daemon_workers
#   Prints how many mdgpud-worker processes serve a vGPU.
# guest_libvirtd_start STEPS
#   Starts /usr/sbin/libvirtd (log /tmp/libvirtd.log, LVPID its pid) in a
#   guest with no user database and no /var: Debian's libvirt uses
#   /var/run, and looks its compiled-in QEMU user (libvirt-qemu) up
#   before it reads qemu.conf.  Waits up to STEPS x 0.1 s for its socket,
#   less if it exits.  The caller checks that it answers.
# guest_libvirtd_stop [PID...]
#   SIGTERM to libvirtd and the PIDs given; waits for libvirtd and
#   returns its exit status, except a death by a signal: Debian 12's
#   libvirtd (9.0) has died of SIGSEGV on SIGTERM after every check had
#   passed (Documentation/e2e.md, "libvirt"), which is printed as a
#   "KNOWN:" line and returns 0.

guest_daemon_start() {
	gd_backend=$1 gd_log=$2
	shift 2
	gd_n0=0
	[ ! -f "$gd_log" ] || gd_n0=$(grep -c 'dispatcher running' "$gd_log")
	if [ "$gd_backend" = cuda ]; then
		env LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/mdgpu-fake \
			MDGPUD_FAKE_CUDA_MEM_MIB=17409 /bin/mdgpud -o backend=cuda \
			-o transport=kernel -o cuda_fb_reserve_mib=1 \
			-o ctx_overhead_mib=1 -o worker_sandbox=best-effort \
			-o hang_timeout_ms=60000 -o log_level=info "$@" \
			>>"$gd_log" 2>&1 &
	else
		/bin/mdgpud -o backend=sim -o transport=kernel -o sim_realtime=1 \
			-o sim_fb_mib=16384 -o log_level=info "$@" \
			>>"$gd_log" 2>&1 &
	fi
	DPID=$!
	gd_i=0
	while [ $gd_i -lt 300 ]; do
		[ "$(grep -c 'dispatcher running' "$gd_log")" -gt "$gd_n0" ] &&
			return 0
		kill -0 "$DPID" 2>/dev/null || break
		sleep 0.1
		gd_i=$((gd_i + 1))
	done
	return 1
}

guest_daemon_workers() {
	gd_nw=0
	for gd_f in /proc/[0-9]*/cmdline; do
		tr '\0' ' ' <"$gd_f" 2>/dev/null |
			grep -q '^mdgpud-worker serve ' && gd_nw=$((gd_nw + 1))
	done
	echo "$gd_nw"
}

guest_libvirtd_start() {
	mkdir -p /var
	[ -e /var/run ] || ln -s /run /var/run
	cat >/etc/passwd <<-EOF
	root:x:0:0:root:/root:/bin/sh
	libvirt-qemu:x:64055:64055::/var/lib/libvirt:/bin/false
	EOF
	printf 'root:x:0:\nlibvirt-qemu:x:64055:\nkvm:x:64056:\n' >/etc/group
	/usr/sbin/libvirtd >/tmp/libvirtd.log 2>&1 &
	LVPID=$!
	gl_i=0
	while [ ! -S /run/libvirt/libvirt-sock ] && [ $gl_i -lt "$1" ]; do
		kill -0 "$LVPID" 2>/dev/null || break
		sleep 0.1
		gl_i=$((gl_i + 1))
	done
}

guest_libvirtd_stop() {
	kill -TERM "$LVPID" "$@"
	wait "$LVPID"
	gl_rc=$?
	[ "$gl_rc" -gt 128 ] || return "$gl_rc"
	echo "KNOWN: libvirtd died of signal $((gl_rc - 128)) on SIGTERM" \
		"(libvirt 9.0; its log: $(tail -n 2 /tmp/libvirtd.log | tr '\n' ' '))"
	return 0
}
