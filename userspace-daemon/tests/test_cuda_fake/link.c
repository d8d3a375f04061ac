// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The fake libcuda's linker (cuLinkCreate_v2, cuLinkAddData_v2,
 * cuLinkComplete, cuLinkDestroy), deterministic, so that a linked image
 * loads in the fake (modules.c, which takes any image as PTX text):
 *
 *   - every input is text: PTX, CUBIN, FATBINARY and OBJECT inputs as
 *     they are, a LIBRARY as "!<arch>\n" followed by the text (anything
 *     else is refused with INVALID_IMAGE);
 *   - the image is the inputs' text, up to each one's first NUL, one
 *     after the other in the order added, each ended by a newline, then
 *     a NUL (its size counts it);
 *   - `.extern .func NAME` of an input must be defined (`.func NAME`,
 *     not extern) by some input, else cuLinkComplete fails with
 *     INVALID_IMAGE and "fake nvlink error: undefined reference to
 *     'NAME'" in the error log;
 *   - text holding "this is not ptx" fails its cuLinkAddData with
 *     INVALID_PTX and "fake ptxas: syntax error in NAME" in the log;
 *   - the info log of a completed link reads "fake nvlink: N inputs,
 *     B bytes; options:" and " OPT=VALUE" for each option given at
 *     cuLinkCreate other than the log buffers, in order.
 */
#include "fake.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mdgpud/cuda_values.h>

#define FAKE_LINK_INPUT_LIBRARY	4
#define FAKE_LINK_ARCH		"!<arch>\n"
#define FAKE_LINK_OPTS_MAX	64

struct CUlinkState_st {
	char *err, *info;		/* the program's log buffers */
	size_t err_size, info_size;
	unsigned int nopt;
	unsigned int opt[FAKE_LINK_OPTS_MAX];
	uintptr_t val[FAKE_LINK_OPTS_MAX];
	char *text;			/* the image so far */
	size_t len;
	unsigned int ninputs;
};

static void fake_link_log(char *buf, size_t size, const char *fmt,
			  const char *arg)
{
	if (buf && size)
		snprintf(buf, size, fmt, arg);
}

FAKE_EXPORT mdgpud_cu_result cuLinkCreate_v2(unsigned int nopt,
					     mdgpud_cu_jit_option *opt,
					     void **val,
					     mdgpud_cu_link_state *out)
{
	struct CUlinkState_st *s;

	if (fake_sticky)
		return fake_sticky;
	if (!out || (nopt && (!opt || !val)))
		return MDGPUD_CUDA_ERROR_INVALID_VALUE;
	s = calloc(1, sizeof(*s));
	if (!s)
		return MDGPUD_CUDA_ERROR_OUT_OF_MEMORY;
	for (unsigned int i = 0; i < nopt; i++) {
		switch (opt[i]) {
		case MDGPUD_CU_JIT_ERROR_LOG_BUFFER:
			s->err = val[i];
			break;
		case MDGPUD_CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES:
			s->err_size = (uintptr_t)val[i];
			break;
		case MDGPUD_CU_JIT_INFO_LOG_BUFFER:
			s->info = val[i];
			break;
		case MDGPUD_CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES:
			s->info_size = (uintptr_t)val[i];
			break;
		default:
			if (s->nopt < FAKE_LINK_OPTS_MAX) {
				s->opt[s->nopt] = opt[i];
				s->val[s->nopt++] = (uintptr_t)val[i];
			}
		}
	}
	fake_link_log(s->err, s->err_size, "%s", "");
	fake_link_log(s->info, s->info_size, "%s", "");
	*out = s;
	return 0;
}

FAKE_EXPORT mdgpud_cu_result cuLinkAddData_v2(mdgpud_cu_link_state s,
					      mdgpud_cu_jit_input_type type,
					      void *data, size_t size,
					      const char *name,
					      unsigned int nopt,
					      mdgpud_cu_jit_option *opt,
					      void **val)
{
	const char *text = data;
	size_t n;
	char *p;

	(void)opt;
	(void)val;
	if (fake_sticky)
		return fake_sticky;
	if (!s || !data || !size || type > FAKE_LINK_INPUT_LIBRARY || nopt)
		return MDGPUD_CUDA_ERROR_INVALID_VALUE;
	if (type == FAKE_LINK_INPUT_LIBRARY) {
		if (size < strlen(FAKE_LINK_ARCH) ||
		    memcmp(text, FAKE_LINK_ARCH, strlen(FAKE_LINK_ARCH)))
			return MDGPUD_CUDA_ERROR_INVALID_IMAGE;
		text += strlen(FAKE_LINK_ARCH);
		size -= strlen(FAKE_LINK_ARCH);
	}
	n = strnlen(text, size);
	p = realloc(s->text, s->len + n + 2);
	if (!p)
		return MDGPUD_CUDA_ERROR_OUT_OF_MEMORY;
	s->text = p;
	memcpy(p + s->len, text, n);
	p[s->len + n] = '\0';
	if (strstr(p + s->len, "this is not ptx")) {
		fake_link_log(s->err, s->err_size,
			      "fake ptxas: syntax error in %s",
			      name ? name : "?");
		p[s->len] = '\0';
		return MDGPUD_CUDA_ERROR_INVALID_PTX;
	}
	s->len += n;
	p[s->len++] = '\n';
	p[s->len] = '\0';
	s->ninputs++;
	return 0;
}

/* The name after `.func` at p (an optional "(...)" return list first). */
static size_t fake_link_func_name(const char *p, char *name, size_t size)
{
	size_t n = 0;

	while (isspace((unsigned char)*p))
		p++;
	if (*p == '(') {
		p = strchr(p, ')');
		if (!p)
			return 0;
		p++;
		while (isspace((unsigned char)*p))
			p++;
	}
	while ((isalnum((unsigned char)p[n]) || p[n] == '_' || p[n] == '$') &&
	       n + 1 < size) {
		name[n] = p[n];
		n++;
	}
	name[n] = '\0';
	return n;
}

/* Whether `.func NAME` appears without `.extern` right before it. */
static int fake_link_defined(const char *text, const char *name)
{
	for (const char *p = strstr(text, ".func"); p;
	     p = strstr(p + 1, ".func")) {
		char got[128];

		if (p - text >= 8 && !strncmp(p - 8, ".extern ", 8))
			continue;
		if (fake_link_func_name(p + 5, got, sizeof(got)) &&
		    !strcmp(got, name))
			return 1;
	}
	return 0;
}

FAKE_EXPORT mdgpud_cu_result cuLinkComplete(mdgpud_cu_link_state s,
					    void **cubin, size_t *size)
{
	const char *ext = ".extern .func";
	int k;

	if (fake_sticky)
		return fake_sticky;
	if (!s || !cubin || !size)
		return MDGPUD_CUDA_ERROR_INVALID_VALUE;
	if (!s->ninputs)
		return MDGPUD_CUDA_ERROR_INVALID_VALUE;
	for (const char *p = strstr(s->text, ext); p;
	     p = strstr(p + 1, ext)) {
		char name[128];

		if (fake_link_func_name(p + strlen(ext), name, sizeof(name)) &&
		    !fake_link_defined(s->text, name)) {
			fake_link_log(s->err, s->err_size, "fake nvlink error: "
				      "undefined reference to '%s'", name);
			return MDGPUD_CUDA_ERROR_INVALID_IMAGE;
		}
	}
	if (s->info && s->info_size) {
		k = snprintf(s->info, s->info_size, "fake nvlink: %u inputs, "
			     "%zu bytes; options:", s->ninputs, s->len + 1);
		for (unsigned int i = 0; i < s->nopt && k >= 0 &&
		     (size_t)k < s->info_size; i++)
			k += snprintf(s->info + k, s->info_size - (size_t)k,
				      " %u=%lu", s->opt[i],
				      (unsigned long)s->val[i]);
	}
	*cubin = s->text;
	*size = s->len + 1;
	return 0;
}

FAKE_EXPORT mdgpud_cu_result cuLinkDestroy(mdgpud_cu_link_state s)
{
	if (!s)
		return MDGPUD_CUDA_ERROR_INVALID_HANDLE;
	free(s->text);
	free(s);
	return 0;
}
