/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The one validator every vGPU command passes through.
 *
 * mdgpud_validate() copies the 64-byte descriptor out of shared memory
 * exactly once (the guest may rewrite it concurrently: TOCTOU) and checks it
 * against the submitting vGPU's own state: opcode, flags, reserved fields
 * and unused operand bytes, address spaces, lengths and offsets (all sums
 * overflow-checked), device ranges inside ONE allocation of this vGPU,
 * handles of this vGPU and of the right kind.  Small operands that live in
 * shared memory (function names, launch parameters) are copied into the
 * result too.  The result holds backend values only: the executor never
 * looks at the guest's descriptor again.
 *
 * Errors (negative errno, reported in the command's completion):
 *   -EINVAL  opcode, flags, reserved field, space, kind, alignment, zero size
 *   -ERANGE  offset/length outside the buffer it names, or overflow
 *   -ENOENT  handle or device address not owned by this vGPU (the
 *            header's stream included)
 *   -E2BIG   length above an ABI limit
 */
#ifndef MDGPUD_VALIDATE_H
#define MDGPUD_VALIDATE_H

#include <stdbool.h>
#include <stdint.h>

#include "uapi/mdgpu.h"
#include "mdgpud/backend.h"
#include "mdgpud/handles.h"
#include "mdgpud/memtab.h"

/* What a command may reference: the submitting vGPU's state. */
struct mdgpud_vctx {
	const struct mdgpud_memtab *mem;
	const struct mdgpud_handles *handles;
	uint8_t *aperture;		/* daemon's mapping */
	uint64_t aperture_size;
	bool iova_ok;			/* transport can DMA guest IOVAs */
	uint32_t shared_bytes_max;	/* launch dynamic shared memory */
};

/* A host-side buffer: the aperture (ptr valid) or a guest IOVA. */
struct mdgpud_hostbuf {
	uint32_t space;			/* MDGPU_SPACE_APERTURE or _IOVA */
	uint64_t addr;			/* aperture offset or IOVA */
	void *ptr;			/* aperture: daemon pointer, else NULL */
};

enum mdgpud_copy_dir {
	MDGPUD_COPY_H2D = 1,
	MDGPUD_COPY_D2H = 2,
	MDGPUD_COPY_D2D = 3,
};

struct mdgpud_vcmd {
	uint16_t opcode;
	uint16_t flags;
	/* The header's stream: its guest handle and backend value, 0 for
	 * the default stream. */
	uint32_t stream_handle;
	uint64_t stream;
	union {
		struct { uint64_t size; } alloc;
		struct { uint64_t addr; } free;
		struct {
			uint64_t addr, len;
			uint32_t value;
			uint32_t width;		/* 1, 2 or 4 */
		} memset;
		struct {
			uint32_t dir;		/* enum mdgpud_copy_dir */
			uint64_t len;
			uint64_t dev_src, dev_dst;	/* device sides */
			struct mdgpud_hostbuf host;	/* host side */
		} copy;
		struct {
			uint32_t kind;
			uint64_t len;
			/* Space DEVICE: the image is [dev, dev + len) of
			 * the vGPU's memory, else in `image`. */
			bool from_dev;
			uint64_t dev;
			struct mdgpud_hostbuf image;
		} module_load;
		struct { uint32_t handle; uint64_t module; } module_unload;
		struct {
			uint32_t module_handle;
			uint64_t module;
			uint32_t name_len;
			/* Copied (and checked for NUL) at validation unless
			 * IOVA: then the executor DMAs and checks it. */
			struct mdgpud_hostbuf name_src;
			char name[MDGPU_NAME_MAX + 1];
		} func_get;
		struct {
			uint64_t func;
			/* The function's per-thread local memory, from its
			 * handle (learnt at FUNC_GET). */
			uint64_t local_bytes;
			struct mdgpud_dim3 grid, block;
			uint32_t shared_bytes;
			uint32_t flags;		/* MDGPU_LAUNCH_F_* */
			uint32_t cluster;	/* MDGPU_CLUSTER() or 0 */
			uint32_t params_len;
			/* Copied at validation unless IOVA (copied by DMA). */
			struct mdgpud_hostbuf params_src;
			uint8_t params[MDGPU_PARAMS_MAX];
		} launch;
		struct { uint32_t kernel; uint64_t arg[5]; } builtin;
		struct {
			uint32_t handle, end_handle;
			uint64_t event, end;
			uint32_t flags;		/* CREATE: MDGPU_EVENT_F_* */
		} event;
		struct { uint32_t what; } query;
		/* ABI 1.2 introspection (core/info.c executes them), and
		 * ABI 1.5's MODULE_FUNCS. */
		struct {
			struct mdgpud_hostbuf dst;	/* len bytes */
			uint32_t len;
			/* FUNC_INFO, MODULE_FUNCS: the guest handle */
			uint32_t handle;
			uint64_t func;		/* FUNC_INFO: backend value */
			uint64_t module;	/* MODULE_FUNCS: the same */
		} info;
		struct {
			uint64_t func;
			uint32_t attr;
			int32_t value;
		} func_attr;
		struct {
			uint32_t module_handle;
			uint64_t module;
			uint32_t name_len;
			/* As FUNC_GET's name: copied unless IOVA. */
			struct mdgpud_hostbuf name_src;
			char name[MDGPU_NAME_MAX + 1];
		} module_global;
		struct {
			uint32_t limit;		/* CUlimit */
			uint32_t set;
			uint64_t value;
		} limit;
		struct {
			uint64_t func;
			struct mdgpud_occupancy q;
		} occupancy;
		/* ABI 1.7 (core/link.c executes it). */
		struct {
			struct mdgpud_hostbuf src;	/* the bundle */
			uint32_t len;
			struct mdgpud_hostbuf dst;	/* the answer */
			uint32_t out_len;
		} module_link;
		/* ABI 1.10 (core/exec_stream.c executes it). */
		struct {
			uint64_t addr, value;
			uint32_t op;		/* enum mdgpu_memop */
			uint32_t flags;		/* wait condition or 0 */
		} memop;
		/* ABI 1.12 (core/exec.c executes it). */
		struct {
			uint32_t token;
			uint32_t flags;		/* MDGPU_HOST_REG_F_* */
			uint64_t offset, len, addr;
		} host_register;
		/* ABI 1.2 streams (core/exec_stream.c executes them). */
		struct {
			uint32_t handle;	/* DESTROY */
			uint64_t stream;	/* DESTROY: backend value */
			uint32_t flags;		/* CREATE: MDGPU_STREAM_F_* */
			int32_t priority;	/* CREATE: not yet clamped */
		} stream_op;
	};
};

int mdgpud_validate(const struct mdgpud_vctx *vc,
		    const struct mdgpu_cmd *shared, struct mdgpud_vcmd *out);
/* Terminate name[len] and reject embedded NULs (-EINVAL); for names the
 * executor fetched by DMA after validation. */
int mdgpud_check_name(char *name, uint32_t len);

#endif /* MDGPUD_VALIDATE_H */
