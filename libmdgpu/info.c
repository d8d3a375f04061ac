// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libmdgpu: what the daemon tells about the GPU and a vGPU's code (ABI
 * 1.2): device info, function info and attributes, module globals,
 * context limits, occupancy; and (ABI 1.5) the kernels of a module.
 * Answers are written by the daemon into staging half 0 of the aperture
 * and copied out once the command is done.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/link_bundle.h"
#include "common/names.h"
#include "priv.h"

/* Run an info command whose answer lands at aperture offset 0; copy at
 * most `cap` bytes of it to out; *full: the answer's size; *result2 (may
 * be NULL): the completion's result2. */
static int mdgpu_info_call(struct mdgpu *g, struct mdgpu_cmd *c, void *out,
			   uint32_t cap, uint64_t *full, uint64_t *result2)
{
	int ret = mdgpu_stage_claim(g, cap);

	if (ret)
		return ret;
	c->info.addr = 0;
	c->info.len = cap;
	c->info.space = MDGPU_SPACE_APERTURE;
	ret = mdgpu_call(g, c, full, result2);
	if (ret)
		return ret;
	memcpy(out, g->aperture, *full < cap ? *full : cap);
	return 0;
}

int mdgpu_device_info(struct mdgpu *g, struct mdgpu_device_info *info)
{
	struct mdgpu_cmd c = mdgpu_cmd_init(MDGPU_OP_DEVICE_INFO);
	uint64_t full = 0;
	int ret;

	memset(info, 0, sizeof(*info));
	ret = mdgpu_info_call(g, &c, info, sizeof(*info), &full, NULL);
	if (ret)
		return ret;
	if (full < offsetof(struct mdgpu_device_info, attr) ||
	    info->nr_attrs > MDGPU_DEV_ATTR_MAX)
		return mdgpu_set_error(g, -EPROTO, "device info of %llu bytes",
				       (unsigned long long)full);
	info->name[sizeof(info->name) - 1] = '\0';
	return 0;
}

int mdgpu_func_info(struct mdgpu *g, uint32_t func,
		    struct mdgpu_func_info **info)
{
	struct mdgpu_cmd c = mdgpu_cmd_init(MDGPU_OP_FUNC_INFO);
	/* The largest answer the daemon gives: MDGPU_INFO_MAX bytes, 8190
	 * parameters (a layout of up to MDGPU_PARAMS_MAX bytes declares
	 * fewer unless most of its parameters are single bytes). */
	const uint32_t cap = MDGPU_INFO_MAX;
	struct mdgpu_func_info *fi;
	uint64_t full = 0;
	int ret;

	*info = NULL;
	fi = calloc(1, cap);
	if (!fi)
		return mdgpu_set_error(g, -ENOMEM, "func_info");
	c.info.handle = func;
	ret = mdgpu_info_call(g, &c, fi, cap, &full, NULL);
	if (!ret && (full > cap || full < sizeof(*fi) || fi->size != full ||
		     fi->nr_params > (full - sizeof(*fi)) /
				     sizeof(struct mdgpu_func_param)))
		ret = mdgpu_set_error(g, -EPROTO, "function info of %llu "
				      "bytes", (unsigned long long)full);
	if (ret) {
		free(fi);
		return ret;
	}
	*info = fi;
	return 0;
}

int mdgpu_func_set_attr(struct mdgpu *g, uint32_t func, uint32_t attr,
			int32_t value)
{
	struct mdgpu_cmd c = mdgpu_cmd_init(MDGPU_OP_FUNC_SET_ATTR);

	c.func_attr.func = func;
	c.func_attr.attr = attr;
	c.func_attr.value = value;
	return mdgpu_call(g, &c, NULL, NULL);
}

int mdgpu_module_global(struct mdgpu *g, uint32_t module, const char *name,
			mdgpu_devptr *addr, uint64_t *bytes)
{
	struct mdgpu_cmd c = mdgpu_cmd_init(MDGPU_OP_MODULE_GLOBAL);
	size_t len = strlen(name);
	int ret;

	if (!len || len > MDGPU_NAME_MAX)
		return mdgpu_set_error(g, -EINVAL, "global name of %zu bytes",
				       len);
	ret = mdgpu_stage_small(g, name, len);
	if (ret)
		return ret;
	c.module_global.name_addr = 0;
	c.module_global.name_len = (uint32_t)len;
	c.module_global.name_space = MDGPU_SPACE_APERTURE;
	c.module_global.module = module;
	return mdgpu_call(g, &c, addr, bytes);
}

/*
 * MODULE_FUNCS (ABI 1.5), asked first with MDGPU_FUNCS_FIRST bytes, which
 * most modules' names fit, and once more with the list's size when they
 * do not.  The answer is checked: the size within the buffer at the end,
 * whole non-empty names, as many as the daemon counts.
 */
#define MDGPU_FUNCS_FIRST	4096U

int mdgpu_module_funcs(struct mdgpu *g, uint32_t module, char **names,
		       size_t *size, uint32_t *count)
{
	uint32_t minor = g->info.abi_version & 0xffff;
	uint64_t cap = MDGPU_FUNCS_FIRST, full = 0, n = 0, have;
	char *buf = NULL;
	int ret = 0;

	*names = NULL;
	*size = 0;
	*count = 0;
	if (minor < 5)
		return mdgpu_set_error(g, -EOPNOTSUPP, "module functions: the "
				       "daemon speaks ABI 1.%u (listing a "
				       "module's kernels needs 1.5)", minor);
	for (int pass = 0; pass < 2; pass++) {
		struct mdgpu_cmd c = mdgpu_cmd_init(MDGPU_OP_MODULE_FUNCS);

		free(buf);
		buf = malloc(cap);
		if (!buf)
			return mdgpu_set_error(g, -ENOMEM, "module functions");
		c.info.handle = module;
		ret = mdgpu_info_call(g, &c, buf, (uint32_t)cap, &full, &n);
		if (ret || full <= cap)
			break;
		/* Longer than the first buffer: its size, once. */
		if (pass || full > MDGPU_FUNCS_MAX) {
			ret = mdgpu_set_error(g, -EPROTO, "module functions: "
					      "a list of %llu bytes",
					      (unsigned long long)full);
			break;
		}
		cap = full;
	}
	if (!ret && (full > cap || n > UINT32_MAX ||
		     !mdgpu_names_check(buf, full, &have) || have != n))
		ret = mdgpu_set_error(g, -EPROTO, "module functions: %llu "
				      "bytes that are not %llu names",
				      (unsigned long long)full,
				      (unsigned long long)n);
	if (ret || !full) {
		free(buf);
		return ret;
	}
	*names = buf;
	*size = full;
	*count = (uint32_t)n;
	return 0;
}

/*
 * One MODULE_LINK of the bundle in staging half 0 with an answer buffer
 * of cap bytes there too (the daemon reads the bundle before it writes:
 * they may overlap).  *full: the answer's size, from the completion or,
 * for a refused link, from the answer's header.  The answer is copied to
 * *out (malloc'ed) when it came whole.
 */
static int mdgpu_link_once(struct mdgpu *g, const void *bundle, size_t len,
			   uint64_t cap, void **out, uint64_t *full)
{
	struct mdgpu_cmd c = mdgpu_cmd_init(MDGPU_OP_MODULE_LINK);
	struct mdgpu_link_answer a;
	int ret;

	*out = NULL;
	*full = 0;
	ret = mdgpu_stage_small(g, bundle, len);
	if (!ret)
		ret = mdgpu_stage_claim(g, cap > len ? cap : len);
	if (ret)
		return ret;
	c.module_link.addr = 0;
	c.module_link.len = (uint32_t)len;
	c.module_link.space = MDGPU_SPACE_APERTURE;
	c.module_link.out_addr = 0;
	c.module_link.out_len = (uint32_t)cap;
	c.module_link.out_space = MDGPU_SPACE_APERTURE;
	ret = mdgpu_call(g, &c, full, NULL);
	if (ret == -EINVAL) {
		/* Refused by the driver: the answer holds the logs.  A
		 * command refused before the link ran left the bundle's
		 * header there, which is no answer's (its size would be
		 * the magic). */
		memcpy(&a, g->aperture, sizeof(a));
		if (!mdgpu_link_answer_check(g->aperture, sizeof(a), a.size,
					     &a))
			return ret;
		*full = a.size;
	} else if (ret) {
		return ret;
	}
	if (*full > cap) {
		if (!ret && !mdgpu_link_answer_check(g->aperture, sizeof(a),
						     *full, &a))
			return mdgpu_set_error(g, -EPROTO, "module link: an "
					       "answer of %llu bytes",
					       (unsigned long long)*full);
		return ret;
	}
	if (!mdgpu_link_answer_check(g->aperture, *full, *full, &a))
		return ret ? ret : mdgpu_set_error(g, -EPROTO, "module link: "
						   "an answer of %llu bytes",
						   (unsigned long long)*full);
	*out = malloc(*full);
	if (!*out)
		return mdgpu_set_error(g, -ENOMEM, "module link");
	memcpy(*out, g->aperture, *full);
	return ret;
}

/*
 * MODULE_LINK (ABI 1.7) with the whole staging half as the answer's
 * buffer (at most MDGPU_LINK_OUT_MAX), which an image of the staging
 * size fits; a larger answer is asked for once more with its size,
 * which links again.
 */
int mdgpu_module_link(struct mdgpu *g, const void *bundle, size_t len,
		      void **answer, size_t *size)
{
	uint32_t minor = g->info.abi_version & 0xffff;
	uint64_t cap = g->stage_size, full = 0;
	int ret;

	*answer = NULL;
	*size = 0;
	if (minor < 7)
		return mdgpu_set_error(g, -EOPNOTSUPP, "module link: the "
				       "daemon speaks ABI 1.%u (device "
				       "linking needs 1.7)", minor);
	if (len < sizeof(struct mdgpu_link_bundle) || len > MDGPU_MODULE_MAX)
		return mdgpu_set_error(g, len > MDGPU_MODULE_MAX ? -E2BIG :
				       -EINVAL, "module link: a bundle of %zu "
				       "bytes", len);
	if (cap > MDGPU_LINK_OUT_MAX)
		cap = MDGPU_LINK_OUT_MAX;
	ret = mdgpu_link_once(g, bundle, len, cap, answer, &full);
	if (!*answer && full > cap && (!ret || ret == -EINVAL)) {
		if (full > g->stage_size)
			return mdgpu_set_error(g, -E2BIG, "module link: an "
					       "answer of %llu bytes, larger "
					       "than the staging area",
					       (unsigned long long)full);
		ret = mdgpu_link_once(g, bundle, len, full, answer, &full);
	}
	if (*answer)
		*size = full;
	return ret;
}

int mdgpu_ctx_limit(struct mdgpu *g, uint32_t limit, int set, uint64_t value,
		    uint64_t *out)
{
	struct mdgpu_cmd c = mdgpu_cmd_init(MDGPU_OP_CTX_LIMIT);

	c.limit.limit = limit;
	c.limit.set = set ? 1 : 0;
	c.limit.value = set ? value : 0;
	return mdgpu_call(g, &c, out, NULL);
}

/* CLUSTER_SIZE came with ABI 1.9: an older daemon is told apart here,
 * as it would refuse the question as malformed (-EINVAL). */
int mdgpu_occupancy(struct mdgpu *g, const struct mdgpu_cmd_occupancy *q,
		    uint64_t *result)
{
	struct mdgpu_cmd c = mdgpu_cmd_init(MDGPU_OP_OCCUPANCY);
	uint32_t minor = g->info.abi_version & 0xffff;

	if (q->what == MDGPU_OCC_CLUSTER_SIZE && minor < 9)
		return mdgpu_set_error(g, -EOPNOTSUPP, "occupancy: the daemon "
				       "speaks ABI 1.%u (the largest cluster "
				       "needs 1.9)", minor);
	c.occupancy = *q;
	return mdgpu_call(g, &c, result, NULL);
}

uint64_t mdgpu_last_code(const struct mdgpu *g)
{
	return g->last_code;
}
