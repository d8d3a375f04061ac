// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Writes the binary seeds of fuzz/corpus/: validate/ (one accepted command
 * per opcode of ABI 1.1, one per ABI 1.2 opcode as the ABI defines it,
 * ABI 1.3's module load from device memory, ABI 1.10's stream memory
 * operations, a few near-misses), hello/
 * (accepted hellos) and link/ (MODULE_LINK bundles and answers).  Run by `make fuzz-seeds`
 * (the outputs are committed; rerun after an ABI change).
 *
 * Usage: mkseeds CORPUS_DIR
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "uapi/mdgpu.h"

/* fuzz_validate.c's vGPU: allocations, handles, aperture. */
#define A0 0x10000ull		/* 4 KiB, A1 right after it */
#define A1 0x11000ull
#define A2 0x100000000ull	/* 1 MiB */
#define H_MODULE 1
#define H_FUNC 2
#define H_EV1 3
#define H_EV2 4
#define H_STALE 5

static const char *dir;

static void put(const char *sub, const char *name, const void *a, size_t n,
		const void *b, size_t m)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s/%s", dir, sub, name);
	f = fopen(path, "wb");
	if (!f || fwrite(a, 1, n, f) != n || (m && fwrite(b, 1, m, f) != m) ||
	    fclose(f)) {
		perror(path);
		exit(1);
	}
}

/* A command, then the context byte and the aperture's first bytes. */
static void cmd(const char *name, const struct mdgpu_cmd *c, uint8_t ctx,
		const char *ap, size_t ap_len)
{
	uint8_t tail[1 + 512];

	tail[0] = ctx;
	memcpy(tail + 1, ap, ap_len);
	put("validate", name, c, sizeof(*c), tail, ap_len ? 1 + ap_len :
		(ctx ? 1 : 0));
}

static void validate_seeds(void)
{
	struct mdgpu_cmd c;

#define C(op) (memset(&c, 0, sizeof(c)), c.opcode = (op))
	C(MDGPU_OP_NOP); cmd("nop", &c, 0, NULL, 0);
	C(MDGPU_OP_NOP); c.flags = MDGPU_CMD_F_IRQ; cmd("nop-irq", &c, 0, NULL, 0);
	C(MDGPU_OP_MEM_ALLOC); c.alloc.size = 4096; cmd("alloc", &c, 0, NULL, 0);
	C(MDGPU_OP_MEM_FREE); c.free.addr = A2; cmd("free", &c, 0, NULL, 0);
	C(MDGPU_OP_MEMSET); c.memset.addr = A0; c.memset.len = 4096;
	c.memset.value = 0xab; cmd("memset", &c, 0, NULL, 0);
	c.memset.len = 8192; cmd("memset-two-allocs", &c, 0, NULL, 0);
	C(MDGPU_OP_COPY); c.copy.src = 0; c.copy.src_space = MDGPU_SPACE_APERTURE;
	c.copy.dst = A0; c.copy.dst_space = MDGPU_SPACE_DEVICE; c.copy.len = 256;
	cmd("copy-h2d", &c, 0, NULL, 0);
	C(MDGPU_OP_COPY); c.copy.src = A2 + 64; c.copy.src_space = MDGPU_SPACE_DEVICE;
	c.copy.dst = 1024; c.copy.dst_space = MDGPU_SPACE_APERTURE; c.copy.len = 3072;
	cmd("copy-d2h", &c, 0, NULL, 0);
	C(MDGPU_OP_COPY); c.copy.src = A0; c.copy.src_space = MDGPU_SPACE_DEVICE;
	c.copy.dst = A1; c.copy.dst_space = MDGPU_SPACE_DEVICE; c.copy.len = 4096;
	cmd("copy-d2d", &c, 0, NULL, 0);
	C(MDGPU_OP_COPY); c.copy.src = 0x1000; c.copy.src_space = MDGPU_SPACE_IOVA;
	c.copy.dst = A2; c.copy.dst_space = MDGPU_SPACE_DEVICE; c.copy.len = 65536;
	cmd("copy-iova-h2d", &c, 1, NULL, 0);
	C(MDGPU_OP_MODULE_LOAD); c.module_load.addr = 0; c.module_load.len = 40;
	c.module_load.space = MDGPU_SPACE_APERTURE;
	c.module_load.kind = MDGPU_MODULE_PTX;
	cmd("module-load-ptx", &c, 0, ".version 7.0\n.target sm_90\n", 28);
	c.module_load.kind = MDGPU_MODULE_CUBIN; c.module_load.space = MDGPU_SPACE_IOVA;
	cmd("module-load-cubin-iova", &c, 1, NULL, 0);
	c.module_load.space = MDGPU_SPACE_DEVICE; c.module_load.addr = A0;
	c.module_load.len = 4096; cmd("module-load-device", &c, 0, NULL, 0);
	c.module_load.len = 8192; cmd("module-load-device-two-allocs", &c, 0, NULL, 0);
	C(MDGPU_OP_MODULE_UNLOAD); c.module_unload.module = H_MODULE;
	cmd("module-unload", &c, 0, NULL, 0);
	c.module_unload.module = H_STALE; cmd("module-unload-stale", &c, 0, NULL, 0);
	C(MDGPU_OP_FUNC_GET); c.func_get.name_addr = 16; c.func_get.name_len = 6;
	c.func_get.name_space = MDGPU_SPACE_APERTURE; c.func_get.module = H_MODULE;
	cmd("func-get", &c, 0, "................kernel", 22);
	cmd("func-get-nul", &c, 0, "................ker\0el", 22);
	C(MDGPU_OP_LAUNCH); c.launch.func = H_FUNC;
	c.launch.grid[0] = 128; c.launch.grid[1] = 1; c.launch.grid[2] = 1;
	c.launch.block[0] = 256; c.launch.block[1] = 2; c.launch.block[2] = 2;
	c.launch.shared_bytes = 1024; c.launch.params_addr = 64;
	c.launch.params_len = 16; c.launch.params_space = MDGPU_SPACE_APERTURE;
	cmd("launch", &c, 0, NULL, 0);
	c.launch.params_len = 0; c.launch.params_space = 0;
	cmd("launch-no-params", &c, 0, NULL, 0);
	C(MDGPU_OP_BUILTIN); c.builtin.kernel = MDGPU_BUILTIN_FILL_U32;
	c.builtin.arg[0] = A0; c.builtin.arg[1] = 1024; c.builtin.arg[2] = 7;
	cmd("builtin-fill", &c, 0, NULL, 0);
	C(MDGPU_OP_BUILTIN); c.builtin.kernel = MDGPU_BUILTIN_ADD_U32;
	c.builtin.arg[0] = A2; c.builtin.arg[1] = A2 + 4096;
	c.builtin.arg[2] = A2 + 8192; c.builtin.arg[3] = 1024;
	cmd("builtin-add", &c, 0, NULL, 0);
	C(MDGPU_OP_BUILTIN); c.builtin.kernel = MDGPU_BUILTIN_CHECKSUM;
	c.builtin.arg[0] = A1; c.builtin.arg[1] = 1024;
	cmd("builtin-checksum", &c, 0, NULL, 0);
	C(MDGPU_OP_BUILTIN); c.builtin.kernel = MDGPU_BUILTIN_SPIN_NS;
	c.builtin.arg[0] = 1000000; cmd("builtin-spin", &c, 0, NULL, 0);
	C(MDGPU_OP_EVENT_CREATE); cmd("event-create", &c, 0, NULL, 0);
	C(MDGPU_OP_EVENT_RECORD); c.event.event = H_EV1;
	cmd("event-record", &c, 0, NULL, 0);
	C(MDGPU_OP_EVENT_ELAPSED); c.event.event = H_EV1; c.event.end = H_EV2;
	cmd("event-elapsed", &c, 0, NULL, 0);
	C(MDGPU_OP_EVENT_DESTROY); c.event.event = H_EV2;
	cmd("event-destroy", &c, 0, NULL, 0);
	C(MDGPU_OP_SYNC); cmd("sync", &c, 0, NULL, 0);
	C(MDGPU_OP_QUERY); c.query.what = MDGPU_QUERY_FB_QUOTA;
	cmd("query", &c, 0, NULL, 0);
	c.query.what = MDGPU_QUERY_BACKEND; cmd("query-backend", &c, 0, NULL, 0);

	/* ABI 1.2 opcodes and fields, as the uapi defines them. */
	C(MDGPU_OP_MEMSET); c.memset.addr = A0; c.memset.len = 4096;
	c.memset.value = 0xdeadbeef; c.memset.width = 4;
	cmd("memset-u32", &c, 0, NULL, 0);
	C(MDGPU_OP_COPY); c.flags = MDGPU_CMD_F_ASYNC; c.stream = 6;
	c.copy.src = 0; c.copy.src_space = MDGPU_SPACE_APERTURE;
	c.copy.dst = A0; c.copy.dst_space = MDGPU_SPACE_DEVICE; c.copy.len = 256;
	cmd("copy-async-stream", &c, 0, NULL, 0);
	C(MDGPU_OP_LAUNCH); c.launch.func = H_FUNC;
	c.launch.grid[0] = c.launch.grid[1] = c.launch.grid[2] = 2;
	c.launch.block[0] = 32; c.launch.block[1] = c.launch.block[2] = 1;
	c.launch.flags = MDGPU_LAUNCH_F_COOPERATIVE;
	c.launch.cluster = MDGPU_CLUSTER(2, 1, 1);
	cmd("launch-cluster", &c, 0, NULL, 0);
	C(MDGPU_OP_EVENT_CREATE); c.event.flags = MDGPU_EVENT_F_DISABLE_TIMING;
	cmd("event-create-notiming", &c, 0, NULL, 0);
	C(MDGPU_OP_QUERY); c.query.what = MDGPU_QUERY_APERTURE_DEVPTR;
	cmd("query-aperture-devptr", &c, 0, NULL, 0);
	C(MDGPU_OP_STREAM_CREATE); c.stream_op.flags = MDGPU_STREAM_F_NON_BLOCKING;
	c.stream_op.priority = -1; cmd("stream-create", &c, 0, NULL, 0);
	C(MDGPU_OP_STREAM_DESTROY); c.stream_op.stream = 6;
	cmd("stream-destroy", &c, 0, NULL, 0);
	C(MDGPU_OP_STREAM_WAIT_EVENT); c.stream = 6; c.event.event = H_EV1;
	cmd("stream-wait-event", &c, 0, NULL, 0);
	C(MDGPU_OP_STREAM_QUERY); c.stream = 6; cmd("stream-query", &c, 0, NULL, 0);
	C(MDGPU_OP_EVENT_QUERY); c.event.event = H_EV1;
	cmd("event-query", &c, 0, NULL, 0);
	C(MDGPU_OP_EVENT_SYNC); c.event.event = H_EV1;
	cmd("event-sync", &c, 0, NULL, 0);
	C(MDGPU_OP_DEVICE_INFO); c.info.addr = 0; c.info.len = 1160;
	c.info.space = MDGPU_SPACE_APERTURE; cmd("device-info", &c, 0, NULL, 0);
	C(MDGPU_OP_FUNC_INFO); c.info.addr = 2048; c.info.len = 512;
	c.info.space = MDGPU_SPACE_APERTURE; c.info.handle = H_FUNC;
	cmd("func-info", &c, 0, NULL, 0);
	C(MDGPU_OP_FUNC_SET_ATTR); c.func_attr.func = H_FUNC;
	c.func_attr.attr = 8; c.func_attr.value = 65536;
	cmd("func-set-attr", &c, 0, NULL, 0);
	C(MDGPU_OP_MODULE_GLOBAL); c.module_global.name_addr = 0;
	c.module_global.name_len = 3; c.module_global.module = H_MODULE;
	c.module_global.name_space = MDGPU_SPACE_APERTURE;
	cmd("module-global", &c, 0, "var", 3);
	C(MDGPU_OP_CTX_LIMIT); c.limit.limit = 0; c.limit.set = 1;
	c.limit.value = 2048; cmd("ctx-limit", &c, 0, NULL, 0);
	C(MDGPU_OP_OCCUPANCY); c.occupancy.func = H_FUNC;
	c.occupancy.what = MDGPU_OCC_ACTIVE_BLOCKS;
	c.occupancy.block_threads = 256; cmd("occupancy", &c, 0, NULL, 0);

	/* ABI 1.5. */
	C(MDGPU_OP_MODULE_FUNCS); c.info.addr = 2048; c.info.len = 1024;
	c.info.space = MDGPU_SPACE_APERTURE; c.info.handle = H_MODULE;
	cmd("module-funcs", &c, 0, NULL, 0);

	/* ABI 1.7: a bundle's header only (the worker refuses it). */
	C(MDGPU_OP_MODULE_LINK); c.module_link.addr = 0;
	c.module_link.len = sizeof(struct mdgpu_link_bundle);
	c.module_link.space = MDGPU_SPACE_APERTURE;
	c.module_link.out_addr = 2048; c.module_link.out_len = 1024;
	c.module_link.out_space = MDGPU_SPACE_APERTURE;
	cmd("module-link", &c, 0, NULL, 0);

	/* ABI 1.10: each stream memory operation; the last word of the
	 * allocation near the top; a 32-bit wait's value with its high half
	 * set and a wait with CUDA's FLUSH bit (both refused). */
	C(MDGPU_OP_STREAM_MEMOP); c.memop.op = MDGPU_MEMOP_WRITE32;
	c.memop.addr = A0 + 4; c.memop.value = 0xfeedf00d;
	cmd("memop-write32", &c, 0, NULL, 0);
	C(MDGPU_OP_STREAM_MEMOP); c.memop.op = MDGPU_MEMOP_WRITE64;
	c.memop.addr = 0xffffffffffffeff8ull; c.memop.value = ~0ull;
	cmd("memop-write64-top", &c, 0, NULL, 0);
	C(MDGPU_OP_STREAM_MEMOP); c.stream = 6; c.memop.op = MDGPU_MEMOP_WAIT32;
	c.memop.addr = A1; c.memop.value = 1;
	c.memop.flags = MDGPU_MEMOP_WAIT_EQ;
	cmd("memop-wait32-stream", &c, 0, NULL, 0);
	c.memop.value = 1ull << 32;
	cmd("memop-wait32-wide-value", &c, 0, NULL, 0);
	C(MDGPU_OP_STREAM_MEMOP); c.memop.op = MDGPU_MEMOP_WAIT64;
	c.memop.addr = A2 + 0xff8; c.memop.value = 1ull << 40;
	c.memop.flags = MDGPU_MEMOP_WAIT_NOR;
	cmd("memop-wait64-nor", &c, 0, NULL, 0);
	c.memop.flags = 1u << 30; cmd("memop-wait64-flush", &c, 0, NULL, 0);

	/* ABI 1.12: a registration, one wrapping the address space, a
	 * registration's release. */
	C(MDGPU_OP_HOST_REGISTER); c.host_register.token = 7;
	c.host_register.offset = 4096; c.host_register.len = 1 << 20;
	c.host_register.addr = 0x7f0000000000ull;
	cmd("host-register", &c, 0, NULL, 0);
	c.host_register.addr = 0xfffffffffff00000ull;
	cmd("host-register-wrap", &c, 0, NULL, 0);
	C(MDGPU_OP_HOST_UNREGISTER); c.free.addr = A1;
	cmd("host-unregister", &c, 0, NULL, 0);
#undef C
}

static void hello(const char *name, const char *type, uint32_t entries,
		  uint64_t host_bytes, size_t len, const char *extra)
{
	struct mdgpu_sock_hello h = {
		.magic = MDGPU_SOCK_MAGIC, .abi_version = MDGPU_ABI_VERSION,
		.ring_entries = entries, .host_bytes = host_bytes,
	};

	strncpy(h.type, type, sizeof(h.type) - 1);
	put("hello", name, &h, len, extra, extra ? strlen(extra) : 0);
}

static void hello_seeds(void)
{
	hello("1g", "1g", 0, 0, 64, NULL);
	hello("2g-ring16", "2g", 16, 0, 64, NULL);
	hello("quarter-host", "quarter", 256, 1 << 20, 64, NULL);
	hello("full-ring4096", "full", 4096, 4096, 64, NULL);
	hello("8g-short", "8g", 0, 0, 40, NULL);
	hello("half-extra", "half", 2, 0, 64, "junk after the hello");
	hello("unknown-type", "99g", 0, 0, 64, NULL);
}

/* A mode byte (fuzz_link.c), then n bytes. */
static void link_put(const char *name, uint8_t mode, const void *b, size_t n)
{
	put("link", name, &mode, 1, b, n);
}

/*
 * A bundle of two inputs (PTX with a name, a library without) and the
 * given options; extra bytes after it when `tail`.
 */
static size_t bundle(uint8_t *out, const struct mdgpu_link_option *o,
		     uint16_t nr_o, int tail)
{
	static const char ptx[] = ".version 8.0\n.target sm_90\n"
				  ".address_size 64\n";
	static const uint8_t lib[] = "!<arch>\n";
	struct mdgpu_link_bundle h = {
		.magic = MDGPU_LINK_MAGIC, .version = MDGPU_LINK_VERSION,
		.nr_options = nr_o, .nr_inputs = 2,
	};
	struct mdgpu_link_input in = {
		.kind = MDGPU_LINK_INPUT_PTX, .name_len = 5,
		.len = sizeof(ptx) - 1,
	};
	size_t off = 0;

	memcpy(out + off, &h, sizeof(h));
	off += sizeof(h);
	memcpy(out + off, o, nr_o * sizeof(*o));
	off += nr_o * sizeof(*o);
	memcpy(out + off, &in, sizeof(in));
	off += sizeof(in);
	memcpy(out + off, "a.ptx", 5);
	off += 5;
	memcpy(out + off, ptx, sizeof(ptx) - 1);
	off += sizeof(ptx) - 1;
	in.kind = MDGPU_LINK_INPUT_LIBRARY;
	in.name_len = 0;
	in.len = sizeof(lib) - 1;
	memcpy(out + off, &in, sizeof(in));
	off += sizeof(in);
	memcpy(out + off, lib, sizeof(lib) - 1);
	off += sizeof(lib) - 1;
	if (tail)
		out[off++] = 0;
	return off;
}

static void link_seeds(void)
{
	const struct mdgpu_link_option o[3] = {
		{ MDGPU_LINK_OPT_TARGET, 90 },
		{ MDGPU_LINK_OPT_OPT_LEVEL, 3 },
		{ MDGPU_LINK_OPT_TARGET, 80 },	/* twice: refused */
	};
	struct {
		struct mdgpu_link_answer a;
		uint8_t bytes[12];
	} ans = { { sizeof(ans), 8, 2, 2 }, "ELF\x7f....EI" };
	uint8_t b[512];

	link_put("bundle", 0, b, bundle(b, o, 2, 0));
	link_put("bundle-no-options", 0, b, bundle(b, o, 0, 0));
	link_put("bundle-tail", 0, b, bundle(b, o, 2, 1));
	link_put("bundle-option-twice", 0, b, bundle(b, o, 3, 0));
	link_put("answer-whole", 3, &ans, sizeof(ans));
	link_put("answer-header", 1, &ans.a, sizeof(ans.a));
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s CORPUS_DIR\n", argv[0]);
		return 2;
	}
	dir = argv[1];
	validate_seeds();
	hello_seeds();
	link_seeds();
	return 0;
}
