// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libFuzzer harness: the ring-command validator (mdgpud_validate()).
 *
 * Input: a struct mdgpu_cmd (64 bytes, zero-padded when shorter), then an
 * optional byte of context flags (bit 0: the transport can DMA IOVAs),
 * then the aperture's contents (the rest zero).  The vGPU state is fixed:
 * four allocations (two of them adjacent, one near the top of the address
 * space), handles 1 (module), 2 (function of 1), 3 and 4 (events), and 5
 * freed (stale).  The aperture is a heap buffer of exactly its size, so a
 * read past it is an ASan error.  Beyond the sanitizers, an accepted
 * command is checked against an independent model of that state: device
 * ranges inside one allocation, host ranges inside the aperture, names
 * without NUL.
 */
#include <stdbool.h>
#include <string.h>

#include "fuzz.h"
#include "mdgpud/validate.h"

#define AP_SIZE 4096u

struct alloc {
	uint64_t addr, size;
};

static const struct alloc allocs[] = {
	{ 0x10000, 0x1000 },
	{ 0x11000, 0x1000 },		/* adjacent to the first */
	{ 0x100000000ull, 0x100000 },
	{ 0xffffffffffffe000ull, 0x1000 },	/* near the top */
};
#define NR_ALLOCS (sizeof(allocs) / sizeof(allocs[0]))

static struct mdgpud_memtab *mem;
static struct mdgpud_handles *handles;
static uint8_t *aperture;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	uint32_t h;

	(void)argc;
	(void)argv;
	FUZZ_CHECK(!mdgpud_memtab_create(1ull << 40, 16, &mem));
	for (size_t i = 0; i < NR_ALLOCS; i++)
		FUZZ_CHECK(!mdgpud_memtab_insert(mem, allocs[i].addr,
						 allocs[i].size,
						 allocs[i].size));
	FUZZ_CHECK(!mdgpud_handles_create(16, &handles));
	/* The seeds (fuzz/corpus/validate) use these handle numbers. */
	FUZZ_CHECK(!mdgpud_handles_add(handles, MDGPUD_H_MODULE, 0x1000, 0,
				       &h) && h == 1);
	FUZZ_CHECK(!mdgpud_handles_add(handles, MDGPUD_H_FUNC, 0x2000, 1,
				       &h) && h == 2);
	FUZZ_CHECK(!mdgpud_handles_add(handles, MDGPUD_H_EVENT, 0x3000, 0,
				       &h) && h == 3);
	FUZZ_CHECK(!mdgpud_handles_add(handles, MDGPUD_H_EVENT, 0x4000, 0,
				       &h) && h == 4);
	FUZZ_CHECK(!mdgpud_handles_add(handles, MDGPUD_H_EVENT, 0x5000, 0,
				       &h) && h == 5);
	FUZZ_CHECK(!mdgpud_handles_del(handles, 5, MDGPUD_H_EVENT));
	aperture = malloc(AP_SIZE);
	FUZZ_CHECK(aperture);
	return 0;
}

/* The model: [addr, addr + len) inside one allocation (len 0: addr in). */
static bool in_one_alloc(uint64_t addr, uint64_t len)
{
	for (size_t i = 0; i < NR_ALLOCS; i++) {
		const struct alloc *a = &allocs[i];

		if (addr < a->addr || addr - a->addr >= a->size)
			continue;
		return len <= a->size - (addr - a->addr);
	}
	return false;
}

static void check_host(const struct mdgpud_hostbuf *hb, uint64_t len,
		       bool iova_ok)
{
	if (hb->space == MDGPU_SPACE_APERTURE) {
		FUZZ_CHECK(hb->addr <= AP_SIZE && len <= AP_SIZE - hb->addr);
		FUZZ_CHECK(hb->ptr == aperture + hb->addr);
	} else {
		FUZZ_CHECK(hb->space == MDGPU_SPACE_IOVA && iova_ok);
		FUZZ_CHECK(!hb->ptr);
	}
}

static bool words_ok(uint64_t addr, uint64_t count)
{
	return !(addr & 3) && count <= UINT64_MAX / 4 &&
	       in_one_alloc(addr, count * 4);
}

static void check_accepted(const struct mdgpu_cmd *c,
			   const struct mdgpud_vcmd *o, bool iova_ok)
{
	FUZZ_CHECK(o->opcode == c->opcode && o->flags == c->flags);
	switch (c->opcode) {
	case MDGPU_OP_MEM_ALLOC:
		FUZZ_CHECK(o->alloc.size);
		break;
	case MDGPU_OP_MEM_FREE:
		/* Inside one; the executor's remove wants its exact start. */
		FUZZ_CHECK(in_one_alloc(o->free.addr, 0));
		break;
	case MDGPU_OP_MEMSET:
		FUZZ_CHECK(in_one_alloc(o->memset.addr, o->memset.len));
		break;
	case MDGPU_OP_COPY:
		if (o->copy.dir != MDGPUD_COPY_H2D)
			FUZZ_CHECK(in_one_alloc(o->copy.dev_src, o->copy.len));
		if (o->copy.dir != MDGPUD_COPY_D2H)
			FUZZ_CHECK(in_one_alloc(o->copy.dev_dst, o->copy.len));
		if (o->copy.dir != MDGPUD_COPY_D2D)
			check_host(&o->copy.host, o->copy.len, iova_ok);
		break;
	case MDGPU_OP_MODULE_LOAD:
		FUZZ_CHECK(o->module_load.len);
		FUZZ_CHECK(o->module_load.from_dev ==
			   (c->module_load.space == MDGPU_SPACE_DEVICE));
		if (o->module_load.from_dev) {
			FUZZ_CHECK(o->module_load.len <=
				   MDGPU_MODULE_DEVICE_MAX);
			FUZZ_CHECK(o->module_load.dev == c->module_load.addr);
			FUZZ_CHECK(in_one_alloc(o->module_load.dev,
						o->module_load.len));
			break;
		}
		FUZZ_CHECK(o->module_load.len <= MDGPU_MODULE_MAX);
		check_host(&o->module_load.image, o->module_load.len, iova_ok);
		break;
	case MDGPU_OP_FUNC_GET:
		FUZZ_CHECK(o->func_get.name_len &&
			   o->func_get.name_len <= MDGPU_NAME_MAX);
		check_host(&o->func_get.name_src, o->func_get.name_len,
			   iova_ok);
		if (o->func_get.name_src.ptr)
			FUZZ_CHECK(strlen(o->func_get.name) ==
				   o->func_get.name_len);
		break;
	case MDGPU_OP_LAUNCH:
		FUZZ_CHECK(o->launch.params_len <= MDGPU_PARAMS_MAX);
		FUZZ_CHECK((uint64_t)o->launch.block.x * o->launch.block.y *
			   o->launch.block.z <= MDGPU_BLOCK_THREADS_MAX);
		if (o->launch.params_len) {
			check_host(&o->launch.params_src,
				   o->launch.params_len, iova_ok);
			if (o->launch.params_src.ptr)
				FUZZ_CHECK(!memcmp(o->launch.params,
						   o->launch.params_src.ptr,
						   o->launch.params_len));
		}
		break;
	case MDGPU_OP_BUILTIN: {
		const uint64_t *a = o->builtin.arg;

		if (o->builtin.kernel == MDGPU_BUILTIN_FILL_U32 ||
		    o->builtin.kernel == MDGPU_BUILTIN_CHECKSUM)
			FUZZ_CHECK(words_ok(a[0], a[1]));
		else if (o->builtin.kernel == MDGPU_BUILTIN_ADD_U32)
			FUZZ_CHECK(words_ok(a[0], a[3]) &&
				   words_ok(a[1], a[3]) &&
				   words_ok(a[2], a[3]));
		else
			FUZZ_CHECK(o->builtin.kernel ==
				   MDGPU_BUILTIN_SPIN_NS &&
				   a[0] <= MDGPU_SPIN_NS_MAX);
		break;
	}
	case MDGPU_OP_STREAM_MEMOP: {
		bool wide = o->memop.op == MDGPU_MEMOP_WRITE64 ||
			    o->memop.op == MDGPU_MEMOP_WAIT64;
		bool wait = o->memop.op == MDGPU_MEMOP_WAIT32 ||
			    o->memop.op == MDGPU_MEMOP_WAIT64;
		uint64_t w = wide ? 8 : 4;

		FUZZ_CHECK(o->memop.op >= MDGPU_MEMOP_WRITE32 &&
			   o->memop.op <= MDGPU_MEMOP_WAIT64);
		FUZZ_CHECK(!(o->memop.addr & (w - 1)) &&
			   in_one_alloc(o->memop.addr, w));
		FUZZ_CHECK(wide || !(o->memop.value >> 32));
		FUZZ_CHECK(wait ? o->memop.flags <= MDGPU_MEMOP_WAIT_NOR :
				  !o->memop.flags);
		break;
	}
	case MDGPU_OP_HOST_REGISTER: {
		uint64_t end;

		FUZZ_CHECK(o->host_register.len &&
			   !((o->host_register.len | o->host_register.offset |
			      o->host_register.addr) & 4095));
		FUZZ_CHECK(!__builtin_add_overflow(o->host_register.offset,
						   o->host_register.len, &end) &&
			   !__builtin_add_overflow(o->host_register.addr,
						   o->host_register.len, &end));
		FUZZ_CHECK(!(o->host_register.flags &
			     ~MDGPU_HOST_REG_F_READ_ONLY));
		FUZZ_CHECK(!c->stream);
		break;
	}
	default:
		break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mdgpu_cmd c = { 0 };
	struct mdgpud_vctx vc = {
		.mem = mem,
		.handles = handles,
		.aperture = aperture,
		.aperture_size = AP_SIZE,
		.shared_bytes_max = 48 * 1024,
	};
	static struct mdgpud_vcmd out;	/* ~4.4 KiB: not on the stack */
	int ret;

	memcpy(&c, data, size < sizeof(c) ? size : sizeof(c));
	memset(aperture, 0, AP_SIZE);
	if (size > sizeof(c)) {
		size_t n = size - sizeof(c) - 1;

		vc.iova_ok = data[sizeof(c)] & 1;
		memcpy(aperture, data + sizeof(c) + 1, n < AP_SIZE ? n : AP_SIZE);
	}
	ret = mdgpud_validate(&vc, &c, &out);
	FUZZ_CHECK(ret <= 0);
	if (!ret)
		check_accepted(&c, &out, vc.iova_ok);
	return 0;
}
