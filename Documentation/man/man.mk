# SPDX-License-Identifier: GPL-2.0 OR MIT
# Documentation/man/man.mk: the manual pages, from the Markdown beside
# this file by go-md2man (Documentation/README.md, "Manual pages"), and
# the bash completion, which takes the same list of configuration keys.
# Included by the top-level Makefile before packaging/packaging.mk, whose
# install and deb targets use what is built here.
#
#   make man          build/man/mdgpud.8, mdgpuctl.8, mdgpud.conf.5 and
#                     each gzipped (.gz, what is installed)
#   make completion   build/bash-completion/mdgpuctl
#   make check-man    the pages and the completion checked
#                     (packaging/tests/check-man.sh; make check-packaging
#                     runs it too)
#
# mdgpud.conf.5's KEYS section is generated from the configuration table
# of Documentation/daemon.md by config-keys.py, which fails the build
# when it does not find that table.  @VERSION@ in a page becomes
# $(MDGPU_VERSION).

MAN_DIR := $(TOP)/Documentation/man
MAN_OUT := $(BUILD)/man
MAN_DAEMON_MD := $(TOP)/Documentation/daemon.md
MAN_KEYS := $(MAN_DIR)/config-keys.py
MAN_PAGES := $(MAN_OUT)/mdgpud.8 $(MAN_OUT)/mdgpuctl.8 \
	$(MAN_OUT)/mdgpud.conf.5
MAN_GZ := $(MAN_PAGES:=.gz)
MAN_COMPLETION := $(BUILD)/bash-completion/mdgpuctl
GO_MD2MAN ?= go-md2man
PYTHON3 ?= python3

.PHONY: man completion check-man
man: $(MAN_PAGES) $(MAN_GZ)
completion: $(MAN_COMPLETION)

# The Markdown go-md2man reads, under build/man/.  The version header is
# rewritten only when the version changes.
$(MAN_OUT)/mdgpud.8.md $(MAN_OUT)/mdgpuctl.8.md: $(MAN_OUT)/%.md: \
		$(MAN_DIR)/%.md $(MDGPU_VERSION_H)
	@mkdir -p $(@D)
	sed 's|@VERSION@|$(MDGPU_VERSION)|g' $< >$@
$(MAN_OUT)/mdgpud.conf.5.md: $(MAN_DIR)/mdgpud.conf.5.md $(MAN_KEYS) \
		$(MAN_DAEMON_MD) $(MDGPU_VERSION_H)
	@mkdir -p $(@D)
	sed 's|@VERSION@|$(MDGPU_VERSION)|g' $< | \
		$(PYTHON3) $(MAN_KEYS) --man $(MAN_DAEMON_MD) >$@.tmp
	mv $@.tmp $@

$(MAN_PAGES): $(MAN_OUT)/%: $(MAN_OUT)/%.md
	@command -v $(GO_MD2MAN) >/dev/null || { echo "man: $(GO_MD2MAN) not found: apt-get install go-md2man (scripts/debian-packages.txt)" >&2; exit 1; }
	$(GO_MD2MAN) -in $< -out $@

# Debian's compression of manual pages (dh_compress): gzip -9, no name or
# time stamp inside, so that a rebuild gives the same bytes.
$(MAN_GZ): %.gz: %
	gzip -9n -c $< >$@

$(MAN_COMPLETION): $(TOP)/packaging/bash-completion/mdgpuctl.in $(MAN_KEYS) \
		$(MAN_DAEMON_MD)
	@mkdir -p $(@D)
	keys=$$($(PYTHON3) $(MAN_KEYS) --keys $(MAN_DAEMON_MD)) && \
		sed "s|@CONFIG_KEYS@|$$(echo $$keys)|" $< >$@.tmp
	mv $@.tmp $@

check-man: $(MAN_PAGES) $(MAN_GZ) $(MAN_COMPLETION) $(BUILD)/mdgpud \
		$(BUILD)/mdgpuctl $(BUILD)/mdgpu-spin
	BUILD=$(BUILD) TOP=$(TOP) PYTHON3=$(PYTHON3) \
		$(TOP)/packaging/tests/check-man.sh
