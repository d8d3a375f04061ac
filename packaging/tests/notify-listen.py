#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR MIT
# notify-listen.py NOTIFY_PATH ADMIN_PATH OUT: stand in for systemd's
# $NOTIFY_SOCKET.  Waits (20 s at most) for the first datagram, writes it
# to OUT, then, at once, asks ADMIN_PATH "version" and appends
# "admin: <answer>": a daemon that sent READY=1 before its admin socket
# listened fails the connect.  Exit 0 when a datagram came.
import socket
import sys

path, admin, out = sys.argv[1:4]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(path)
s.settimeout(20)
try:
    msg = s.recv(4096).decode()
except socket.timeout:
    sys.exit(1)
with open(out, "w") as f:
    f.write(msg.rstrip("\n") + "\n")
    try:
        a = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        a.settimeout(10)
        a.connect(admin)
        a.sendall(b"version\n")
        buf = b""
        while not buf.endswith(b"ok\n") and b"err " not in buf:
            chunk = a.recv(4096)
            if not chunk:
                break
            buf += chunk
        f.write("admin: " + buf.decode().splitlines()[0] + "\n")
    except OSError as e:
        f.write("admin: failed: %s\n" % e)
