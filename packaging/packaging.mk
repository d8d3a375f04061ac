# SPDX-License-Identifier: GPL-2.0 OR MIT
# packaging/packaging.mk: install from source, Debian packages, and their
# checks (Documentation/install.md).  Included last by the top-level
# Makefile.
#
#   make install [PREFIX=/usr/local] [DESTDIR=]
#       install-daemon + install-dev + install-libcuda (userspace)
#   make install-daemon    mdgpud (SBINDIR, a link to the binary in
#                          LIBEXECDIR next to mdgpud-worker), mdgpud-instance,
#                          mdgpuctl (SBINDIR: an administrator's tool),
#                          mdgpu-spin (BINDIR),
#                          mdgpud@.service, mdgpu-metrics@.service,
#                          sysusers.d, /etc/mdgpu/mdgpud.conf
#                          (kept when present), docs and licenses, the
#                          manual pages mdgpud.8, mdgpuctl.8 and
#                          mdgpud.conf.5 (MANDIR, gzipped), the bash
#                          completion of mdgpuctl and mdgpud
#                          (BASHCOMPLETIONDIR; Documentation/man/man.mk
#                          builds both)
#   make install-dev       libmdgpu.a, <mdgpu/mdgpu.h>, libmdgpu.pc
#   make install-libcuda   LIBDIR/mdgpu/: libcuda.so.1 (+ libnvidia-ml.so.1
#                          when build/nvml/ has it), the disabled ld.so
#                          snippet under DATADIR/mdgpu/
#   make install-dkms      /usr/src/mdgpu-<version>/ (DKMS source of
#                          mdgpu.ko) + modules-load.d/mdgpu.conf
#   make install-guest     /usr/src/mdgpu-guest-<version>/ + the udev rule
#                          and sysusers.d group for /dev/mdgpu-vgpuN
#   make uninstall         removes what the five above install (not the
#                          config in /etc/mdgpu)
#   make deb               build/deb/*.deb: mdgpud, libmdgpu-dev,
#                          mdgpu-libcuda, mdgpu-dkms, mdgpu-guest-dkms
#   make check-packaging   the packages' contents, their installation into
#                          and removal from an empty dpkg root, the installed
#                          programs run from it (sd_notify, journald
#                          prefixes, mdgpud-instance), a DESTDIR install and
#                          uninstall, DKMS builds of both modules for
#                          Debian's 6.1 and 6.12 headers, the manual
#                          pages and the bash completion (make check-man)
#   make check-dkms        the DKMS builds alone

PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
SBINDIR ?= $(PREFIX)/sbin
LIBEXECDIR ?= $(PREFIX)/libexec/mdgpu
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
DATADIR ?= $(PREFIX)/share
DOCDIR ?= $(DATADIR)/doc/mdgpu
MANDIR ?= $(DATADIR)/man
# Where bash-completion looks for a command's completion at its first <TAB>.
BASHCOMPLETIONDIR ?= $(DATADIR)/bash-completion/completions
# /etc whatever the prefix: mdgpud's default config path is compiled in.
SYSCONFDIR ?= /etc
# Directories systemd and udev read under /usr/local/lib as under /usr/lib.
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system
SYSUSERSDIR ?= $(PREFIX)/lib/sysusers.d
MODULESLOADDIR ?= $(PREFIX)/lib/modules-load.d
UDEVRULESDIR ?= $(PREFIX)/lib/udev/rules.d
DKMSSRCDIR ?= /usr/src
INSTALL ?= install

P_DIR := $(TOP)/packaging
# The libraries of LIBDIR/mdgpu/: every lib*.so* of these build folders.
# nvml/ holds libnvidia-ml.so.1.
P_LIB_DIRS := $(BUILD)/libcuda $(BUILD)/nvml
P_LIB_TARGETS := libcuda nvml
P_DOCS := $(TOP)/README.md $(TOP)/Documentation/install.md \
	$(TOP)/Documentation/daemon.md $(TOP)/Documentation/mdgpuctl.md \
	$(TOP)/Documentation/libcuda.md $(TOP)/Documentation/integration.md
P_SUBST = sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@LIBDIR@|$(LIBDIR)|g' \
	-e 's|@BINDIR@|$(BINDIR)|g' -e 's|@SBINDIR@|$(SBINDIR)|g' \
	-e 's|@LIBEXECDIR@|$(LIBEXECDIR)|g' -e 's|@DATADIR@|$(DATADIR)|g' \
	-e 's|@INCLUDEDIR@|$(INCLUDEDIR)|g' -e 's|@DOCDIR@|$(DOCDIR)|g' \
	-e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' -e 's|@VERSION@|$(MDGPU_VERSION)|g'
P_DKMS_DIR = $(DESTDIR)$(DKMSSRCDIR)/mdgpu-$(MDGPU_VERSION)
P_GUEST_DIR = $(DESTDIR)$(DKMSSRCDIR)/mdgpu-guest-$(MDGPU_VERSION)

.PHONY: install install-daemon install-dev install-libcuda install-dkms \
	install-guest uninstall deb check-packaging check-dkms

install: install-daemon install-dev install-libcuda

install-daemon: $(BUILD)/mdgpud $(BUILD)/mdgpud-worker $(BUILD)/mdgpuctl \
		$(BUILD)/mdgpu-spin $(MAN_GZ) $(MAN_COMPLETION)
	$(INSTALL) -d $(DESTDIR)$(LIBEXECDIR) $(DESTDIR)$(SBINDIR) \
		$(DESTDIR)$(BINDIR) $(DESTDIR)$(SYSTEMDUNITDIR) \
		$(DESTDIR)$(SYSUSERSDIR) $(DESTDIR)$(SYSCONFDIR)/mdgpu \
		$(DESTDIR)$(DOCDIR)/LICENSES $(DESTDIR)$(MANDIR)/man5 \
		$(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(BASHCOMPLETIONDIR)
	$(INSTALL) -m 0755 $(BUILD)/mdgpud $(BUILD)/mdgpud-worker \
		$(DESTDIR)$(LIBEXECDIR)/
	$(P_SUBST) $(P_DIR)/mdgpud-instance.in >$(DESTDIR)$(LIBEXECDIR)/mdgpud-instance
	chmod 0755 $(DESTDIR)$(LIBEXECDIR)/mdgpud-instance
	ln -sfn $(shell realpath -m --relative-to=$(SBINDIR) $(LIBEXECDIR))/mdgpud \
		$(DESTDIR)$(SBINDIR)/mdgpud
	$(INSTALL) -m 0755 $(BUILD)/mdgpuctl $(DESTDIR)$(SBINDIR)/
	$(INSTALL) -m 0755 $(BUILD)/mdgpu-spin $(DESTDIR)$(BINDIR)/
	$(P_SUBST) $(P_DIR)/systemd/mdgpud@.service.in \
		>$(DESTDIR)$(SYSTEMDUNITDIR)/mdgpud@.service
	$(P_SUBST) $(P_DIR)/systemd/mdgpu-metrics@.service.in \
		>$(DESTDIR)$(SYSTEMDUNITDIR)/mdgpu-metrics@.service
	$(INSTALL) -m 0644 $(P_DIR)/sysusers.d/mdgpu.conf $(DESTDIR)$(SYSUSERSDIR)/mdgpu.conf
	@if [ -e $(DESTDIR)$(SYSCONFDIR)/mdgpu/mdgpud.conf ]; then \
		echo "install: keeping $(DESTDIR)$(SYSCONFDIR)/mdgpu/mdgpud.conf"; \
	else $(INSTALL) -m 0644 $(TOP)/userspace-daemon/mdgpud.conf \
		$(DESTDIR)$(SYSCONFDIR)/mdgpu/mdgpud.conf; fi
	$(INSTALL) -m 0644 $(P_DOCS) $(TOP)/COPYING $(DESTDIR)$(DOCDIR)/
	$(INSTALL) -m 0644 $(TOP)/LICENSES/* $(DESTDIR)$(DOCDIR)/LICENSES/
	$(INSTALL) -m 0644 $(filter %.8.gz,$(MAN_GZ)) $(DESTDIR)$(MANDIR)/man8/
	$(INSTALL) -m 0644 $(filter %.5.gz,$(MAN_GZ)) $(DESTDIR)$(MANDIR)/man5/
	$(INSTALL) -m 0644 $(MAN_COMPLETION) $(DESTDIR)$(BASHCOMPLETIONDIR)/mdgpuctl
	ln -sfn mdgpuctl $(DESTDIR)$(BASHCOMPLETIONDIR)/mdgpud

install-dev: $(BUILD)/libmdgpu.a
	$(INSTALL) -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(PKGCONFIGDIR) \
		$(DESTDIR)$(INCLUDEDIR)/mdgpu/uapi
	$(INSTALL) -m 0644 $(BUILD)/libmdgpu.a $(DESTDIR)$(LIBDIR)/
	$(INSTALL) -m 0644 $(TOP)/libmdgpu/include/mdgpu/*.h $(DESTDIR)$(INCLUDEDIR)/mdgpu/
	$(INSTALL) -m 0644 $(TOP)/include/uapi/mdgpu.h $(DESTDIR)$(INCLUDEDIR)/mdgpu/uapi/
	$(P_SUBST) $(P_DIR)/libmdgpu.pc.in >$(DESTDIR)$(PKGCONFIGDIR)/libmdgpu.pc

install-libcuda: $(P_LIB_TARGETS)
	$(INSTALL) -d $(DESTDIR)$(LIBDIR)/mdgpu $(DESTDIR)$(DATADIR)/mdgpu
	@set -e; for f in $(addsuffix /lib*.so*,$(P_LIB_DIRS)); do \
		[ -e "$$f" ] || continue; \
		echo "install $$f -> $(DESTDIR)$(LIBDIR)/mdgpu/"; \
		cp -P "$$f" $(DESTDIR)$(LIBDIR)/mdgpu/; \
	done
	$(P_SUBST) $(P_DIR)/mdgpu-libcuda.conf.in \
		>$(DESTDIR)$(DATADIR)/mdgpu/mdgpu-libcuda.conf

install-dkms: $(MDGPU_VERSION_H)
	rm -rf $(P_DKMS_DIR)
	$(INSTALL) -d $(P_DKMS_DIR)/kmod $(P_DKMS_DIR)/include \
		$(DESTDIR)$(MODULESLOADDIR)
	$(INSTALL) -m 0644 $(TOP)/Kbuild $(P_DKMS_DIR)/
	$(INSTALL) -m 0644 $(TOP)/kmod/*.[ch] $(MDGPU_VERSION_H) $(P_DKMS_DIR)/kmod/
	cp -r $(TOP)/include/uapi $(TOP)/include/common $(P_DKMS_DIR)/include/
	cp -r $(TOP)/mdev-types $(P_DKMS_DIR)/
	$(P_SUBST) $(P_DIR)/dkms/mdgpu.dkms.conf.in >$(P_DKMS_DIR)/dkms.conf
	$(INSTALL) -m 0644 $(P_DIR)/modules-load.d/mdgpu.conf $(DESTDIR)$(MODULESLOADDIR)/

install-guest: $(MDGPU_VERSION_H)
	rm -rf $(P_GUEST_DIR)
	$(INSTALL) -d $(P_GUEST_DIR)/include/uapi $(DESTDIR)$(UDEVRULESDIR) \
		$(DESTDIR)$(SYSUSERSDIR)
	$(INSTALL) -m 0644 $(GUEST_SRCS) $(MDGPU_VERSION_H) $(P_GUEST_DIR)/
	$(INSTALL) -m 0644 $(GUEST_UAPI) $(P_GUEST_DIR)/include/uapi/
	$(P_SUBST) $(P_DIR)/dkms/mdgpu-guest.dkms.conf.in >$(P_GUEST_DIR)/dkms.conf
	$(INSTALL) -m 0644 $(P_DIR)/udev/60-mdgpu-guest.rules $(DESTDIR)$(UDEVRULESDIR)/
	$(INSTALL) -m 0644 $(P_DIR)/sysusers.d/mdgpu.conf \
		$(DESTDIR)$(SYSUSERSDIR)/mdgpu-guest.conf

uninstall:
	rm -f $(DESTDIR)$(SBINDIR)/mdgpud $(DESTDIR)$(SBINDIR)/mdgpuctl \
		$(DESTDIR)$(BINDIR)/mdgpu-spin \
		$(DESTDIR)$(SYSTEMDUNITDIR)/mdgpud@.service \
		$(DESTDIR)$(SYSTEMDUNITDIR)/mdgpu-metrics@.service \
		$(DESTDIR)$(SYSUSERSDIR)/mdgpu.conf \
		$(DESTDIR)$(SYSUSERSDIR)/mdgpu-guest.conf \
		$(DESTDIR)$(MODULESLOADDIR)/mdgpu.conf \
		$(DESTDIR)$(UDEVRULESDIR)/60-mdgpu-guest.rules \
		$(DESTDIR)$(LIBDIR)/libmdgpu.a $(DESTDIR)$(PKGCONFIGDIR)/libmdgpu.pc \
		$(DESTDIR)$(MANDIR)/man8/mdgpud.8.gz \
		$(DESTDIR)$(MANDIR)/man8/mdgpuctl.8.gz \
		$(DESTDIR)$(MANDIR)/man5/mdgpud.conf.5.gz \
		$(DESTDIR)$(BASHCOMPLETIONDIR)/mdgpuctl \
		$(DESTDIR)$(BASHCOMPLETIONDIR)/mdgpud
	rm -rf $(DESTDIR)$(LIBEXECDIR) $(DESTDIR)$(INCLUDEDIR)/mdgpu \
		$(DESTDIR)$(LIBDIR)/mdgpu $(DESTDIR)$(DATADIR)/mdgpu \
		$(DESTDIR)$(DOCDIR) $(P_DKMS_DIR) $(P_GUEST_DIR)
	@echo "uninstall: $(DESTDIR)$(SYSCONFDIR)/mdgpu/ kept (configuration)"

# Everything the packages hold, built first so that the packaging script
# only installs.
P_DEB_INPUTS := $(BUILD)/mdgpud $(BUILD)/mdgpud-worker $(BUILD)/mdgpuctl \
	$(BUILD)/mdgpu-spin $(BUILD)/libmdgpu.a $(P_LIB_TARGETS) $(MDGPU_VERSION_H) \
	$(MAN_GZ) $(MAN_COMPLETION)

deb: $(P_DEB_INPUTS)
	BUILD=$(BUILD) MAKE="$(MAKE)" VERSION=$(MDGPU_VERSION) \
		$(P_DIR)/deb/build-debs.sh $(BUILD)/deb

check-dkms: $(MDGPU_VERSION_H)
	BUILD=$(BUILD) MAKE="$(MAKE)" VERSION=$(MDGPU_VERSION) \
		$(P_DIR)/tests/check-dkms.sh

check-packaging: deb
	BUILD=$(BUILD) MAKE="$(MAKE)" VERSION=$(MDGPU_VERSION) TOP=$(TOP) \
		$(P_DIR)/tests/check-packaging.sh

check: check-packaging
