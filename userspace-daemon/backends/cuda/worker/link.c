// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * MODULE_LINK (ABI 1.7): the driver's linker over a client's link bundle.
 * The bundle in the staging area is parsed whole first (every byte of it
 * is the tenant's: common/link_bundle.h bounds it), then cuLinkCreate
 * with the bundle's options and two log buffers of our own, cuLinkAddData
 * per input (PTX copied and NUL-terminated, as the driver reads it as
 * text), cuLinkComplete, the image and the logs copied into the staging
 * area as the answer (struct mdgpu_link_answer), cuLinkDestroy.
 */
#include "worker.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/link_bundle.h"

/* The driver's option for each of ours (uapi enum mdgpu_link_opt). */
static const mdgpud_cu_jit_option mdgpud_worker_link_opt[] = {
	[MDGPU_LINK_OPT_TARGET] = MDGPUD_CU_JIT_TARGET,
	[MDGPU_LINK_OPT_OPT_LEVEL] = MDGPUD_CU_JIT_OPTIMIZATION_LEVEL,
	[MDGPU_LINK_OPT_DEBUG] = MDGPUD_CU_JIT_GENERATE_DEBUG_INFO,
	[MDGPU_LINK_OPT_LINEINFO] = MDGPUD_CU_JIT_GENERATE_LINE_INFO,
	[MDGPU_LINK_OPT_VERBOSE] = MDGPUD_CU_JIT_LOG_VERBOSE,
	[MDGPU_LINK_OPT_MAX_REGISTERS] = MDGPUD_CU_JIT_MAX_REGISTERS,
	[MDGPU_LINK_OPT_FALLBACK] = MDGPUD_CU_JIT_FALLBACK_STRATEGY,
	[MDGPU_LINK_OPT_CACHE_MODE] = MDGPUD_CU_JIT_CACHE_MODE,
};

_Static_assert(sizeof(mdgpud_worker_link_opt) /
	       sizeof(mdgpud_worker_link_opt[0]) == MDGPU_LINK_OPT_COUNT,
	       "a driver option for every link option");

/* And the driver's input type for each of our kinds. */
static const mdgpud_cu_jit_input_type mdgpud_worker_link_kind[] = {
	[MDGPU_LINK_INPUT_PTX] = MDGPUD_CU_JIT_INPUT_PTX,
	[MDGPU_LINK_INPUT_CUBIN] = MDGPUD_CU_JIT_INPUT_CUBIN,
	[MDGPU_LINK_INPUT_FATBINARY] = MDGPUD_CU_JIT_INPUT_FATBINARY,
	[MDGPU_LINK_INPUT_OBJECT] = MDGPUD_CU_JIT_INPUT_OBJECT,
	[MDGPU_LINK_INPUT_LIBRARY] = MDGPUD_CU_JIT_INPUT_LIBRARY,
};

/* The linker's two logs, ours, each NUL-terminated by the driver. */
struct mdgpud_worker_link_logs {
	char err[MDGPU_LINK_LOG_MAX + 1];
	char info[MDGPU_LINK_LOG_MAX + 1];
};

/* Adds input `i` of the bundle to the link. */
static int mdgpud_worker_link_add(struct mdgpud_worker *w,
				  mdgpud_cu_link_state st,
				  const struct mdgpu_link_item *it, uint32_t i)
{
	char name[MDGPU_NAME_MAX + 1];
	void *data = (void *)it->data;
	mdgpud_cu_result res;
	char *ptx = NULL;

	if (it->name_len) {
		memcpy(name, it->name, it->name_len);
		name[it->name_len] = '\0';
	} else {
		snprintf(name, sizeof(name), "input%u", i);
	}
	if (it->kind == MDGPU_LINK_INPUT_PTX) {
		ptx = malloc(it->len + 1);
		if (!ptx)
			return -ENOMEM;
		memcpy(ptx, it->data, it->len);
		ptx[it->len] = '\0';
		data = ptx;
	}
	res = w->cu.link_add_data(st, mdgpud_worker_link_kind[it->kind], data,
				  ptx ? strlen(ptx) + 1 : it->len, name, 0,
				  NULL, NULL);
	free(ptx);
	return mdgpud_worker_err(w, res, "cuLinkAddData");
}

/*
 * Writes the answer into the staging area: whole if it fits `room`
 * bytes, else its header alone; r0 its size, r1 the bytes written.
 */
static void mdgpud_worker_link_answer(struct mdgpud_worker *w,
				      struct mdgpud_cuda_rpc_slot *s,
				      const void *img, size_t img_len,
				      const struct mdgpud_worker_link_logs *l,
				      uint64_t room)
{
	struct mdgpu_link_answer a = {
		.image_len = (uint32_t)img_len,
		.error_log_len = (uint32_t)strnlen(l->err, MDGPU_LINK_LOG_MAX),
		.info_log_len = (uint32_t)strnlen(l->info, MDGPU_LINK_LOG_MAX),
	};
	uint8_t *p = w->shm->staging;

	a.size = (uint32_t)(sizeof(a) + a.image_len + a.error_log_len +
			    a.info_log_len);
	memcpy(p, &a, sizeof(a));
	s->result[0] = a.size;
	s->result[1] = sizeof(a);
	if (a.size > room)
		return;
	p += sizeof(a);
	memcpy(p, img, img_len);
	p += img_len;
	memcpy(p, l->err, a.error_log_len);
	p += a.error_log_len;
	memcpy(p, l->info, a.info_log_len);
	s->result[1] = a.size;
}

/* Creates the link with the bundle's options and our log buffers. */
static int mdgpud_worker_link_create(struct mdgpud_worker *w,
				     const struct mdgpu_link_option *o,
				     uint32_t n,
				     struct mdgpud_worker_link_logs *l,
				     mdgpud_cu_link_state *st)
{
	mdgpud_cu_jit_option opt[MDGPU_LINK_OPTIONS_MAX + 4] = {
		MDGPUD_CU_JIT_ERROR_LOG_BUFFER,
		MDGPUD_CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
		MDGPUD_CU_JIT_INFO_LOG_BUFFER,
		MDGPUD_CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
	};
	void *val[MDGPU_LINK_OPTIONS_MAX + 4] = {
		l->err, (void *)(uintptr_t)sizeof(l->err),
		l->info, (void *)(uintptr_t)sizeof(l->info),
	};

	for (uint32_t i = 0; i < n; i++) {
		opt[4 + i] = mdgpud_worker_link_opt[o[i].what];
		val[4 + i] = (void *)(uintptr_t)o[i].value;
	}
	return mdgpud_worker_err(w, w->cu.link_create(4 + n, opt, val, st),
				 "cuLinkCreate");
}

/*
 * a0 bundle bytes in the staging area, a1 the bytes the answer may take.
 * A malformed bundle answers its errno with nothing written (r1 0); a
 * link the driver refused answers -EINVAL (-EIO if it lost the context)
 * and its answer (no image, the logs); an image above MDGPU_MODULE_MAX
 * answers -E2BIG with nothing written.
 */
int mdgpud_worker_op_module_link(struct mdgpud_worker *w,
				 struct mdgpud_cuda_rpc_slot *s)
{
	uint64_t len = s->arg[0];
	uint64_t room = s->arg[1] < sizeof(w->shm->staging) ?
			s->arg[1] : sizeof(w->shm->staging);
	struct mdgpu_link_option opts[MDGPU_LINK_OPTIONS_MAX];
	struct mdgpu_link_item *items;
	struct mdgpud_worker_link_logs *l;
	uint32_t nopts, nitems;
	mdgpud_cu_link_state st = NULL;
	void *img = NULL;
	size_t img_len = 0;
	int ret;

	s->result[0] = 0;
	s->result[1] = 0;
	if (len > sizeof(w->shm->staging) ||
	    room < sizeof(struct mdgpu_link_answer))
		return -EINVAL;
	items = calloc(MDGPU_LINK_INPUTS_MAX, sizeof(*items));
	l = calloc(1, sizeof(*l));
	if (!items || !l) {
		ret = -ENOMEM;
		goto out;
	}
	ret = mdgpu_link_bundle_parse(w->shm->staging, len, opts, &nopts,
				      items, &nitems);
	if (ret)
		goto out;
	ret = mdgpud_worker_link_create(w, opts, nopts, l, &st);
	for (uint32_t i = 0; !ret && i < nitems; i++)
		ret = mdgpud_worker_link_add(w, st, &items[i], i);
	if (!ret)
		ret = mdgpud_worker_err(w, w->cu.link_complete(st, &img,
							       &img_len),
					"cuLinkComplete");
	if (!ret && img_len > MDGPU_MODULE_MAX) {
		ret = -E2BIG;
		goto out;
	}
	/*
	 * Only a sticky error (the context is lost) or a lack of memory ends
	 * here; any other refusal of the driver (an undefined symbol is
	 * CUDA_ERROR_INVALID_SOURCE, measured on driver 580) is the program's
	 * to read in the error log.
	 */
	if (ret == -ENOMEM || ret == -ENODEV ||
	    (ret == -EIO && mdgpud_cuda_error_is_sticky(w->last_cu)))
		goto out;
	if (ret) {
		ret = -EINVAL;	/* refused: the logs say why */
		img_len = 0;
	}
	/* The image is the driver's until cuLinkDestroy, below. */
	mdgpud_worker_link_answer(w, s, img, img_len, l, room);
out:
	if (st)
		w->cu.link_destroy(st);
	free(items);
	free(l);
	return ret;
}
