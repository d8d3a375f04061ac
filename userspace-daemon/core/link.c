// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Execution of MODULE_LINK (ABI 1.7, validated first): the bundle is
 * copied once into a buffer of the daemon's own (the client may rewrite
 * its memory meanwhile), the backend links it and writes its answer into
 * another buffer of the daemon's, which is checked and then written to
 * the command's answer buffer: the client's memory is never read back.
 * Documentation/abi.md says what the command answers.
 */
#include <errno.h>
#include <stdlib.h>

#include "common/link_bundle.h"
#include "core_priv.h"
#include "mdgpud/log.h"

int mdgpud_link_exec(struct mdgpud_vgpu *v, struct mdgpud_vcmd *vc,
		     uint64_t *result)
{
	const struct mdgpud_backend_ops *b = v->core->bops;
	uint32_t len = vc->module_link.len, cap = vc->module_link.out_len;
	struct mdgpu_link_answer a;
	uint8_t *bundle, *out;
	uint32_t written = 0;
	uint64_t size = 0;
	int ret, wret;

	if (!b->module_link)
		return -EOPNOTSUPP;
	bundle = malloc(len);
	out = malloc(cap);
	if (!bundle || !out) {
		ret = -ENOMEM;
		goto out;
	}
	ret = mdgpud_host_read(v, &vc->module_link.src, bundle, len);
	if (ret)
		goto out;
	ret = b->module_link(v->bctx, bundle, len, out, cap, &written, &size);
	if (!written)
		goto out;
	if (written > cap ||
	    !mdgpu_link_answer_check(out, written, size, &a) ||
	    (written != size && size <= cap)) {
		mdgpud_warn("vgpu %u: module link: the backend wrote %u bytes "
			    "of a %llu-byte answer into %u", v->id, written,
			    (unsigned long long)size, cap);
		ret = -EIO;	/* the backend's inconsistency */
		goto out;
	}
	/* A refused link's answer still goes out: its logs. */
	wret = mdgpud_host_write(v, &vc->module_link.dst, out, written);
	if (!ret)
		ret = wret;
	if (!ret)
		*result = size;
out:
	free(bundle);
	free(out);
	return ret;
}
