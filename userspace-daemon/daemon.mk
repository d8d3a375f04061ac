# userspace-daemon/daemon.mk: owned by its component (placeholder)
