// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The fake libcuda's modules: PTX text scanned for its kernels and
 * globals, named fake kernels that run as C functions, the listing of a
 * module's kernels (in .entry order), and the function, occupancy, limit
 * and device-attribute queries (Documentation/
 * cuda-backend.md, "The fake libcuda", lists what is faked and how).
 *
 * A module's PTX is scanned (comments skipped) at brace depth 0 for
 *   .entry NAME(.param TYPE NAME, .param .align N .b8 NAME[K], ...)
 * whose parameters get the offsets and sizes the real driver reports
 * (cuFuncGetParamInfo): each at the next multiple of its alignment (the
 * .align given, else the size of its type), size = type size x elements;
 * and for
 *   .global [.align N] TYPE NAME[K]...;
 * which become zeroed "device memory" of that size, owned by the module
 * (initialisers are not evaluated), for cuModuleGetGlobal.  Inside an
 * entry's body,
 *   .local [.align N] TYPE NAME[K];
 * variables are laid out one after the other at their alignment: the
 * kernel's LOCAL_SIZE_BYTES, to which a launch of it grows the context's
 * STACK_SIZE limit (kept, as the driver keeps it).
 *
 * A kernel whose name is in fake_kernels[] and whose parameter sizes are
 * the ones listed there runs as C over the fake device memory (host
 * pointers) when launched, one "thread" per element up to the grid's
 * thread count; any other kernel loads, answers its parameter layout and
 * attributes, and fails at launch with CUDA_ERROR_NOT_SUPPORTED.
 * Kernels run on their stream's thread (libcuda.c), from a copy of their
 * parameters taken at launch; a queued launch holds its module, so an
 * unload frees it only once the launch has run.
 *
 * The named kernels:
 *   mdgpud_fill_u32, mdgpud_add_u32, mdgpud_checksum_u32, mdgpud_spin_ns
 *     (the builtins, same parameter layouts as kernels/builtin.cu)
 *   scale_add (u64 p, u64 n, u32 k): p[i] = p[i] * k + i
 *   poke (u64, u32), illegal_address (): simulate a GPU fault:
 *     ILLEGAL_ADDRESS, sticky, seen at the next sync
 *   forever (): blocks its stream forever (a kernel that never ends)
 *   vadd_f32 (a, b, c, u32 n), saxpy (f32 a, x, y, u32 n),
 *   fill_u32 (p, u32 v, u32 n), write_global (u32 v): see below
 *   launch_info (u64 p): writes how it was launched, 5 u32 at p:
 *     by cuLaunchKernelEx (1) or cuLaunchKernel (0), its COOPERATIVE
 *     attribute, its cluster dimensions x, y, z (0 without one)
 *   sum_big (u64 out, .b8 p[N]) for any N: *out = the sum of the N
 *     bytes of p, for parameter blobs up to CUDA's 32764 bytes
 *
 * A slow JIT: text holding "mdgpud-fake-jit-ms N" (in a comment, say)
 * makes cuModuleLoadDataEx take N ms (at most FAKE_JIT_MS_MAX) before it
 * answers, as the driver's JIT of a large PTX does.
 */
#include "fake.h"

#include <ctype.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <mdgpud/cuda_values.h>
#include <uapi/mdgpu.h>

#define FAKE_NAME_LEN		128
#define FAKE_PARAMS_MAX		256
#define FAKE_MODULE_ITEMS_MAX	256	/* kernels, and globals, per module */
/* Parameter space of a kernel (CUDA 12.1+: 32764 bytes). */
#define FAKE_PARAM_BYTES_MAX	32764
#define FAKE_GLOBAL_BYTES_MAX	(64u << 20)
#define FAKE_JIT_MARK		"mdgpud-fake-jit-ms "
#define FAKE_JIT_MS_MAX		600000u

/* H100-like per-SM resources, for the occupancy answers. */
#define FAKE_SM_COUNT		132
#define FAKE_SM_WARPS		64
#define FAKE_SM_BLOCKS		32
#define FAKE_SM_SMEM		233472
#define FAKE_BLOCK_SMEM_OPTIN	232448
#define FAKE_BLOCK_SMEM_RESERVED 1024
#define FAKE_BLOCK_SMEM_DEFAULT	49152

struct fake_kernel;

struct CUfunc_st {
	char name[FAKE_NAME_LEN];
	struct CUmod_st *mod;
	const struct fake_kernel *k;	/* NULL: not one the fake runs */
	uint32_t nparams;
	uint32_t off[FAKE_PARAMS_MAX], size[FAKE_PARAMS_MAX];
	uint32_t param_bytes;		/* end of the last parameter */
	uint32_t local_bytes;		/* its body's .local variables */
	int attr[MDGPU_FUNC_ATTR_MAX];	/* settable ones change */
	int cache_config;
};

struct fake_global {
	char name[FAKE_NAME_LEN];
	uint8_t *mem;
	size_t size;
};

struct CUmod_st {
	atomic_uint refs;		/* its load, and each queued launch */
	struct CUfunc_st *funcs;
	uint32_t nfuncs;
	struct fake_global *globals;
	uint32_t nglobals;
	int ptx_version;		/* .version X.Y as 10 X + Y */
};

/* ---- named fake kernels --------------------------------------------- */

typedef mdgpud_cu_result (*fake_fn)(const struct CUfunc_st *f,
				    const uint8_t *blob, unsigned int threads);

struct fake_kernel {
	const char *name;
	uint32_t nparams;
	uint32_t size[6];		/* expected parameter sizes */
	fake_fn fn;
};

static uint64_t arg_u64(const struct CUfunc_st *f, const uint8_t *b, int i)
{
	uint64_t v;

	memcpy(&v, b + f->off[i], sizeof(v));
	return v;
}

static uint32_t arg_u32(const struct CUfunc_st *f, const uint8_t *b, int i)
{
	uint32_t v;

	memcpy(&v, b + f->off[i], sizeof(v));
	return v;
}

static float arg_f32(const struct CUfunc_st *f, const uint8_t *b, int i)
{
	float v;

	memcpy(&v, b + f->off[i], sizeof(v));
	return v;
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* The builtins (kernels/builtin.cu): every element, as their grid loops. */
static mdgpud_cu_result k_builtin_fill(const struct CUfunc_st *f,
				       const uint8_t *b, unsigned int t)
{
	uint32_t *dst = (uint32_t *)(uintptr_t)arg_u64(f, b, 0);
	uint64_t n = arg_u64(f, b, 1);
	uint32_t v = arg_u32(f, b, 2);

	(void)t;
	for (uint64_t i = 0; i < n; i++)
		dst[i] = v;
	return 0;
}

static mdgpud_cu_result k_builtin_add(const struct CUfunc_st *f,
				      const uint8_t *b, unsigned int t)
{
	uint32_t *dst = (uint32_t *)(uintptr_t)arg_u64(f, b, 0);
	const uint32_t *x = (const uint32_t *)(uintptr_t)arg_u64(f, b, 1);
	const uint32_t *y = (const uint32_t *)(uintptr_t)arg_u64(f, b, 2);
	uint64_t n = arg_u64(f, b, 3);

	(void)t;
	for (uint64_t i = 0; i < n; i++)
		dst[i] = x[i] + y[i];
	return 0;
}

static mdgpud_cu_result k_builtin_checksum(const struct CUfunc_st *f,
					   const uint8_t *b, unsigned int t)
{
	const uint32_t *w = (const uint32_t *)(uintptr_t)arg_u64(f, b, 0);
	uint64_t n = arg_u64(f, b, 1);
	uint64_t *out = (uint64_t *)(uintptr_t)arg_u64(f, b, 2);
	uint64_t sum = 0;

	(void)t;
	for (uint64_t i = 0; i < n; i++)
		sum += (uint64_t)w[i] * (2 * i + 1);
	*out += sum;
	return 0;
}

/*
 * The stream is busy for ns, as a GPU would be; the CPU is not (a TCG
 * guest's one vCPU also runs the guest that submitted the kernel).
 */
static mdgpud_cu_result k_builtin_spin(const struct CUfunc_st *f,
				       const uint8_t *b, unsigned int t)
{
	uint64_t end = fake_now_ns() + arg_u64(f, b, 0);
	struct timespec ts = { .tv_sec = (time_t)(end / 1000000000ull),
			       .tv_nsec = (long)(end % 1000000000ull) };

	(void)t;
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) ==
	       EINTR)
		;
	return 0;
}

/* p[i] = p[i] * k + i, one thread per element. */
static mdgpud_cu_result k_scale_add(const struct CUfunc_st *f,
				    const uint8_t *b, unsigned int t)
{
	uint32_t *p = (uint32_t *)(uintptr_t)arg_u64(f, b, 0);
	uint64_t n = min_u64(arg_u64(f, b, 1), t);
	uint32_t k = arg_u32(f, b, 2);

	for (uint64_t i = 0; i < n; i++)
		p[i] = p[i] * k + (uint32_t)i;
	return 0;
}

/* A GPU fault: ILLEGAL_ADDRESS, sticky, seen at the next sync. */
static mdgpud_cu_result k_fault(const struct CUfunc_st *f, const uint8_t *b,
				unsigned int t)
{
	(void)f;
	(void)b;
	(void)t;
	fake_sticky = MDGPUD_CUDA_ERROR_ILLEGAL_ADDRESS;
	return 0;
}

/* A kernel that never ends: blocks its stream's thread. */
static mdgpud_cu_result k_forever(const struct CUfunc_st *f,
				  const uint8_t *b, unsigned int t)
{
	(void)f;
	(void)b;
	(void)t;
	for (;;)
		pause();
	return 0;
}

/* vadd_f32(a, b, c, n): c[i] = a[i] + b[i]. */
static mdgpud_cu_result k_vadd_f32(const struct CUfunc_st *f,
				   const uint8_t *b, unsigned int t)
{
	const float *x = (const float *)(uintptr_t)arg_u64(f, b, 0);
	const float *y = (const float *)(uintptr_t)arg_u64(f, b, 1);
	float *z = (float *)(uintptr_t)arg_u64(f, b, 2);
	uint64_t n = min_u64(arg_u32(f, b, 3), t);

	for (uint64_t i = 0; i < n; i++)
		z[i] = x[i] + y[i];
	return 0;
}

/* saxpy(a, x, y, n): y[i] = a * x[i] + y[i]. */
static mdgpud_cu_result k_saxpy(const struct CUfunc_st *f, const uint8_t *b,
				unsigned int t)
{
	float a = arg_f32(f, b, 0);
	const float *x = (const float *)(uintptr_t)arg_u64(f, b, 1);
	float *y = (float *)(uintptr_t)arg_u64(f, b, 2);
	uint64_t n = min_u64(arg_u32(f, b, 3), t);

	for (uint64_t i = 0; i < n; i++)
		y[i] = a * x[i] + y[i];
	return 0;
}

/* fill_u32(p, v, n): p[i] = v. */
static mdgpud_cu_result k_fill_u32(const struct CUfunc_st *f,
				   const uint8_t *b, unsigned int t)
{
	uint32_t *p = (uint32_t *)(uintptr_t)arg_u64(f, b, 0);
	uint32_t v = arg_u32(f, b, 1);
	uint64_t n = min_u64(arg_u32(f, b, 2), t);

	for (uint64_t i = 0; i < n; i++)
		p[i] = v;
	return 0;
}

/* write_global(v): word i of the module's first .global = v + i. */
static mdgpud_cu_result k_write_global(const struct CUfunc_st *f,
				       const uint8_t *b, unsigned int t)
{
	uint32_t v = arg_u32(f, b, 0);
	const struct fake_global *g;
	uint64_t n;

	if (!f->mod->nglobals)
		return MDGPUD_CUDA_ERROR_INVALID_VALUE;
	g = &f->mod->globals[0];
	n = min_u64(g->size / 4, t);
	for (uint64_t i = 0; i < n; i++) {
		uint32_t w = v + (uint32_t)i;

		memcpy(g->mem + 4 * i, &w, sizeof(w));
	}
	return 0;
}

/* How the kernel running on this stream thread was launched. */
static _Thread_local const struct fake_launch_info *fake_cur_launch;

/* launch_info(p): p[0..4] = ex, cooperative, cluster x, y, z. */
static mdgpud_cu_result k_launch_info(const struct CUfunc_st *f,
				      const uint8_t *b, unsigned int t)
{
	uint32_t *p = (uint32_t *)(uintptr_t)arg_u64(f, b, 0);
	const struct fake_launch_info *i = fake_cur_launch;

	(void)t;
	p[0] = (uint32_t)i->ex;
	p[1] = (uint32_t)i->cooperative;
	for (int k = 0; k < 3; k++)
		p[2 + k] = i->cluster[k];
	return 0;
}

/* sum_big(out, p[N]): *out = sum of the N bytes of p (any N). */
static mdgpud_cu_result k_sum_big(const struct CUfunc_st *f,
				  const uint8_t *b, unsigned int t)
{
	uint64_t *out = (uint64_t *)(uintptr_t)arg_u64(f, b, 0);
	const uint8_t *p = b + f->off[1];
	uint64_t sum = 0;

	(void)t;
	for (uint32_t i = 0; i < f->size[1]; i++)
		sum += p[i];
	*out = sum;
	return 0;
}

/* A listed parameter size that matches any size. */
#define FAKE_SIZE_ANY		UINT32_MAX

static const struct fake_kernel fake_kernels[] = {
	{ "mdgpud_fill_u32", 3, { 8, 8, 4 }, k_builtin_fill },
	{ "mdgpud_add_u32", 4, { 8, 8, 8, 8 }, k_builtin_add },
	{ "mdgpud_checksum_u32", 3, { 8, 8, 8 }, k_builtin_checksum },
	{ "mdgpud_spin_ns", 1, { 8 }, k_builtin_spin },
	{ "scale_add", 3, { 8, 8, 4 }, k_scale_add },
	{ "poke", 2, { 8, 4 }, k_fault },
	{ "illegal_address", 0, { 0 }, k_fault },
	{ "forever", 0, { 0 }, k_forever },
	{ "vadd_f32", 4, { 8, 8, 8, 4 }, k_vadd_f32 },
	{ "saxpy", 4, { 4, 8, 8, 4 }, k_saxpy },
	{ "fill_u32", 3, { 8, 4, 4 }, k_fill_u32 },
	{ "write_global", 1, { 4 }, k_write_global },
	{ "launch_info", 1, { 8 }, k_launch_info },
	{ "sum_big", 2, { 8, FAKE_SIZE_ANY }, k_sum_big },
};

/* The named kernel f runs as, if its parameters are the listed ones. */
static const struct fake_kernel *fake_kernel_find(const struct CUfunc_st *f)
{
	for (size_t i = 0; i < sizeof(fake_kernels) / sizeof(fake_kernels[0]);
	     i++) {
		const struct fake_kernel *k = &fake_kernels[i];
		bool same = !strcmp(k->name, f->name) &&
			    k->nparams == f->nparams;

		for (uint32_t p = 0; same && p < k->nparams; p++)
			same = k->size[p] == f->size[p] ||
			       k->size[p] == FAKE_SIZE_ANY;
		if (same)
			return k;
	}
	return NULL;
}

/* ---- the PTX scanner ------------------------------------------------- */

struct fake_lex {
	const char *p;
	int brace, paren;
};

/*
 * The next token into tok: a word of [A-Za-z0-9_.$%] or one punctuation
 * character; comments and whitespace skipped; braces and parentheses
 * counted.  false at the end of the text.
 */
static bool fake_lex_next(struct fake_lex *lx, char *tok, size_t len)
{
	const char *p = lx->p;
	size_t n = 0;

	for (;;) {
		while (*p && isspace((unsigned char)*p))
			p++;
		if (p[0] == '/' && p[1] == '/') {
			while (*p && *p != '\n')
				p++;
		} else if (p[0] == '/' && p[1] == '*') {
			const char *e = strstr(p + 2, "*/");

			p = e ? e + 2 : p + strlen(p);
		} else {
			break;
		}
	}
	if (!*p) {
		lx->p = p;
		return false;
	}
	if (isalnum((unsigned char)*p) || strchr("_.$%", *p)) {
		while (*p && (isalnum((unsigned char)*p) || strchr("_.$%", *p))) {
			if (n + 1 < len)
				tok[n++] = *p;
			p++;
		}
	} else {
		tok[n++] = *p;
		lx->brace += *p == '{';
		lx->brace -= *p == '}';
		lx->paren += *p == '(';
		lx->paren -= *p == ')';
		p++;
	}
	tok[n] = 0;
	lx->p = p;
	return true;
}

/* Bytes of a PTX fundamental type (.u32, .f64, .b8, .pred ...), or 0. */
static uint32_t fake_type_size(const char *t)
{
	static const struct {
		const char *name;
		uint32_t size;
	} types[] = {
		{ ".u8", 1 }, { ".s8", 1 }, { ".b8", 1 },
		{ ".u16", 2 }, { ".s16", 2 }, { ".b16", 2 }, { ".f16", 2 },
		{ ".bf16", 2 }, { ".f16x2", 4 },
		{ ".u32", 4 }, { ".s32", 4 }, { ".b32", 4 }, { ".f32", 4 },
		{ ".u64", 8 }, { ".s64", 8 }, { ".b64", 8 }, { ".f64", 8 },
		{ ".b128", 16 }, { ".pred", 1 },
	};

	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (!strcmp(t, types[i].name))
			return types[i].size;
	return 0;
}

/*
 * One declaration after .param or .global: [.align N] [.v2|.v4] TYPE
 * [.ptr .space .align N] NAME [K]...  Ends at the first token it does
 * not take, left in tok.  *size: bytes, *align: alignment.
 */
static bool fake_parse_decl(struct fake_lex *lx, char *tok, size_t len,
			    char *name, uint32_t *size, uint32_t *align)
{
	uint64_t elem = 0, count = 1, vec = 1, al = 0;

	name[0] = 0;
	while (fake_lex_next(lx, tok, len)) {
		if (!strcmp(tok, ".align")) {
			if (!fake_lex_next(lx, tok, len))
				return false;
			al = strtoull(tok, NULL, 0);
		} else if (!strcmp(tok, ".v2") || !strcmp(tok, ".v4")) {
			vec = tok[2] - '0';
		} else if (fake_type_size(tok)) {
			elem = fake_type_size(tok);
		} else if (tok[0] == '.') {
			continue;	/* .ptr, .global, .const, .visible */
		} else if (!name[0] && (isalpha((unsigned char)tok[0]) ||
					strchr("_$%", tok[0]))) {
			snprintf(name, FAKE_NAME_LEN, "%s", tok);
		} else if (tok[0] == '[' && name[0]) {
			uint64_t k;

			if (!fake_lex_next(lx, tok, len))
				return false;
			k = tok[0] == ']' ? 0 : strtoull(tok, NULL, 0);
			if (tok[0] != ']' && (!fake_lex_next(lx, tok, len) ||
					      tok[0] != ']'))
				return false;
			if (k > FAKE_GLOBAL_BYTES_MAX)
				return false;
			count *= k;
		} else {
			break;
		}
	}
	if (!elem || !name[0])
		return false;
	elem *= vec;
	if (!al)
		al = elem;
	if (count > FAKE_GLOBAL_BYTES_MAX / elem || al > 4096)
		return false;
	*size = (uint32_t)(elem * count);
	*align = (uint32_t)al;
	return true;
}

static bool fake_add_func(struct CUmod_st *m, const char *name)
{
	struct CUfunc_st *n, *f;

	if (m->nfuncs >= FAKE_MODULE_ITEMS_MAX)
		return false;
	n = realloc(m->funcs, (m->nfuncs + 1) * sizeof(*n));
	if (!n)
		return false;
	m->funcs = n;
	f = &m->funcs[m->nfuncs++];
	memset(f, 0, sizeof(*f));
	snprintf(f->name, sizeof(f->name), "%s", name);
	return true;
}

/*
 * A .local declaration in f's body: its variable is laid out after the
 * others, at its alignment, as the kernel's frame (LOCAL_SIZE_BYTES).
 */
static bool fake_parse_local(struct CUfunc_st *f, struct fake_lex *lx)
{
	char tok[FAKE_NAME_LEN], name[FAKE_NAME_LEN];
	uint64_t end = f->local_bytes;
	uint32_t size, align;

	if (!fake_parse_decl(lx, tok, sizeof(tok), name, &size, &align))
		return false;
	end = (end + align - 1) / align * align + size;
	if (end > FAKE_GLOBAL_BYTES_MAX)
		return false;
	f->local_bytes = (uint32_t)end;
	return true;
}

/* After ".entry": NAME and, if a '(' follows, its parameters. */
static bool fake_parse_entry(struct CUmod_st *m, struct fake_lex *lx)
{
	char tok[FAKE_NAME_LEN], name[FAKE_NAME_LEN];
	struct CUfunc_st *f;
	uint32_t end = 0;
	struct fake_lex peek;

	if (!fake_lex_next(lx, tok, sizeof(tok)) || !fake_add_func(m, tok))
		return false;
	f = &m->funcs[m->nfuncs - 1];
	peek = *lx;
	if (!fake_lex_next(&peek, tok, sizeof(tok)) || tok[0] != '(')
		return true;	/* no parameter list */
	*lx = peek;
	if (!fake_lex_next(lx, tok, sizeof(tok)))
		return false;
	while (tok[0] != ')') {
		uint32_t size, align;

		if (strcmp(tok, ".param") ||
		    !fake_parse_decl(lx, tok, sizeof(tok), name, &size,
				     &align) ||
		    f->nparams >= FAKE_PARAMS_MAX)
			return false;
		end = (end + align - 1) / align * align;
		f->off[f->nparams] = end;
		f->size[f->nparams++] = size;
		end += size;
		if (end > FAKE_PARAM_BYTES_MAX)
			return false;
		if (tok[0] == ',' && !fake_lex_next(lx, tok, sizeof(tok)))
			return false;
	}
	f->param_bytes = end;
	return true;
}

static bool fake_parse_global(struct CUmod_st *m, struct fake_lex *lx)
{
	char tok[FAKE_NAME_LEN], name[FAKE_NAME_LEN];
	struct fake_global *n;
	uint32_t size, align;

	if (!fake_parse_decl(lx, tok, sizeof(tok), name, &size, &align) ||
	    m->nglobals >= FAKE_MODULE_ITEMS_MAX)
		return false;
	n = realloc(m->globals, (m->nglobals + 1) * sizeof(*n));
	if (!n)
		return false;
	m->globals = n;
	n = &m->globals[m->nglobals];
	snprintf(n->name, sizeof(n->name), "%s", name);
	n->size = size;
	n->mem = aligned_alloc(256, ((size_t)size + 255) & ~(size_t)255);
	if (!n->mem)
		return false;
	memset(n->mem, 0, size);
	m->nglobals++;
	/* An initialiser or the ';' follows: skipped by the caller. */
	return true;
}

static void fake_module_free(struct CUmod_st *m)
{
	for (uint32_t i = 0; i < m->nglobals; i++)
		free(m->globals[i].mem);
	free(m->globals);
	free(m->funcs);
	free(m);
}

/* Function attributes as the driver would report them for this kernel. */
static void fake_func_init(struct CUmod_st *m, struct CUfunc_st *f)
{
	f->mod = m;
	f->k = fake_kernel_find(f);
	for (int a = 0; a < MDGPU_FUNC_ATTR_MAX; a++)
		f->attr[a] = 0;
	f->attr[MDGPUD_CU_FUNC_ATTR_MAX_THREADS_PER_BLOCK] = 1024;
	f->attr[MDGPUD_CU_FUNC_ATTR_LOCAL_SIZE_BYTES] = (int)f->local_bytes;
	f->attr[MDGPUD_CU_FUNC_ATTR_NUM_REGS] = 16;
	f->attr[MDGPUD_CU_FUNC_ATTR_PTX_VERSION] = m->ptx_version;
	f->attr[MDGPUD_CU_FUNC_ATTR_BINARY_VERSION] = 90;
	f->attr[MDGPUD_CU_FUNC_ATTR_MAX_DYNAMIC_SHARED_SIZE_BYTES] =
		FAKE_BLOCK_SMEM_DEFAULT;
	f->attr[MDGPUD_CU_FUNC_ATTR_PREFERRED_SHARED_MEMORY_CARVEOUT] =
		MDGPUD_CU_SHAREDMEM_CARVEOUT_DEFAULT;
}

static mdgpud_cu_result fake_module_parse(const char *text,
					  struct CUmod_st **out)
{
	struct fake_lex lx = { .p = text };
	struct CUmod_st *m = calloc(1, sizeof(*m));
	char tok[FAKE_NAME_LEN];
	bool ok = true;
	int64_t body = -1;	/* the entry whose body follows, if any */

	if (!m)
		return MDGPUD_CUDA_ERROR_OUT_OF_MEMORY;
	atomic_init(&m->refs, 1);
	m->ptx_version = 80;
	while (ok && fake_lex_next(&lx, tok, sizeof(tok))) {
		if (lx.brace && body >= 0 && !strcmp(tok, ".local")) {
			ok = fake_parse_local(&m->funcs[body], &lx);
			continue;
		}
		if (lx.brace || lx.paren)
			continue;
		if (!strcmp(tok, ".func"))
			body = -1;	/* a device function's frame: not
					 * the kernel's */
		if (!strcmp(tok, ".version") &&
		    fake_lex_next(&lx, tok, sizeof(tok))) {
			unsigned int a = 0, b = 0;

			if (sscanf(tok, "%u.%u", &a, &b) == 2)
				m->ptx_version = (int)(a * 10 + b);
		} else if (!strcmp(tok, ".entry")) {
			ok = fake_parse_entry(m, &lx);
			body = (int64_t)m->nfuncs - 1;
		} else if (!strcmp(tok, ".global")) {
			ok = fake_parse_global(m, &lx);
		}
	}
	if (!ok || (!m->nfuncs && !m->nglobals)) {
		fake_module_free(m);
		return ok ? MDGPUD_CUDA_ERROR_INVALID_IMAGE :
			    MDGPUD_CUDA_ERROR_INVALID_PTX;
	}
	for (uint32_t i = 0; i < m->nfuncs; i++)
		fake_func_init(m, &m->funcs[i]);
	*out = m;
	return 0;
}

/* ---- module and function entry points -------------------------------- */

FAKE_EXPORT mdgpud_cu_result cuModuleLoadDataEx(mdgpud_cu_module *mod,
						const void *image,
						unsigned int nopt,
						mdgpud_cu_jit_option *opt,
						void **val)
{
	const char *text = image;
	const char *jit = strstr(text, FAKE_JIT_MARK);

	if (fake_sticky)
		return fake_sticky;
	if (jit) {
		unsigned long ms = strtoul(jit + strlen(FAKE_JIT_MARK), NULL,
					   10);
		struct timespec ts;

		if (ms > FAKE_JIT_MS_MAX)
			ms = FAKE_JIT_MS_MAX;
		ts.tv_sec = (time_t)(ms / 1000);
		ts.tv_nsec = (long)(ms % 1000) * 1000000;
		while (nanosleep(&ts, &ts) && errno == EINTR)
			;
	}
	if (strstr(text, "this is not ptx")) {
		for (unsigned int i = 0; i + 1 < nopt; i++)
			if (opt[i] == MDGPUD_CU_JIT_ERROR_LOG_BUFFER &&
			    opt[i + 1] ==
				    MDGPUD_CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES)
				snprintf(val[i], (size_t)(uintptr_t)val[i + 1],
					 "fake ptxas: syntax error");
		return MDGPUD_CUDA_ERROR_INVALID_PTX;
	}
	/* An image without code for this GPU (a fatbin of other
	 * architectures, to the real driver). */
	if (strstr(text, "no binary for this gpu"))
		return MDGPUD_CUDA_ERROR_NO_BINARY_FOR_GPU;
	return fake_module_parse(text, mod);
}

/* Its launches still queued keep it until they have run. */
static void fake_module_put(struct CUmod_st *m)
{
	if (atomic_fetch_sub(&m->refs, 1) == 1)
		fake_module_free(m);
}

FAKE_EXPORT mdgpud_cu_result cuModuleUnload(mdgpud_cu_module m)
{
	fake_module_put(m);
	return 0;
}

FAKE_EXPORT mdgpud_cu_result cuModuleGetFunction(mdgpud_cu_function *f,
						 mdgpud_cu_module m,
						 const char *name)
{
	for (uint32_t i = 0; i < m->nfuncs; i++)
		if (!strcmp(m->funcs[i].name, name)) {
			*f = &m->funcs[i];
			return 0;
		}
	return MDGPUD_CUDA_ERROR_NOT_FOUND;
}

/*
 * A module's kernels in the order of their .entry lines (CUDA 12.4's
 * listing; the real driver lists a cubin's in declaration order too).
 * As cuda.h documents it: at most num_functions handles, the same ones
 * cuModuleGetFunction answers.
 */
FAKE_EXPORT mdgpud_cu_result cuModuleGetFunctionCount(unsigned int *count,
						      mdgpud_cu_module m)
{
	if (!count)
		return MDGPUD_CUDA_ERROR_INVALID_VALUE;
	*count = m->nfuncs;
	return 0;
}

FAKE_EXPORT mdgpud_cu_result
cuModuleEnumerateFunctions(mdgpud_cu_function *functions,
			   unsigned int num_functions, mdgpud_cu_module m)
{
	if (!functions)
		return MDGPUD_CUDA_ERROR_INVALID_VALUE;
	for (uint32_t i = 0; i < m->nfuncs && i < num_functions; i++)
		functions[i] = &m->funcs[i];
	return 0;
}

FAKE_EXPORT mdgpud_cu_result cuFuncGetName(const char **name,
					   mdgpud_cu_function f)
{
	if (!name)
		return MDGPUD_CUDA_ERROR_INVALID_VALUE;
	*name = f->name;
	return 0;
}

FAKE_EXPORT mdgpud_cu_result cuModuleGetGlobal_v2(mdgpud_cu_deviceptr *dptr,
						  size_t *bytes,
						  mdgpud_cu_module m,
						  const char *name)
{
	for (uint32_t i = 0; i < m->nglobals; i++)
		if (!strcmp(m->globals[i].name, name)) {
			if (dptr)
				*dptr = (uintptr_t)m->globals[i].mem;
			if (bytes)
				*bytes = m->globals[i].size;
			return 0;
		}
	return MDGPUD_CUDA_ERROR_NOT_FOUND;
}

FAKE_EXPORT mdgpud_cu_result cuFuncGetParamInfo(mdgpud_cu_function f,
						size_t index, size_t *offset,
						size_t *size)
{
	if (index >= f->nparams)
		return MDGPUD_CUDA_ERROR_INVALID_VALUE;
	*offset = f->off[index];
	*size = f->size[index];
	return 0;
}

FAKE_EXPORT mdgpud_cu_result cuFuncGetAttribute(int *v,
						mdgpud_cu_function_attribute a,
						mdgpud_cu_function f)
{
	if (a > MDGPUD_CU_FUNC_ATTR_CLUSTER_SCHEDULING_POLICY_PREFERENCE)
		return MDGPUD_CUDA_ERROR_INVALID_VALUE;
	*v = f->attr[a];
	return 0;
}

FAKE_EXPORT mdgpud_cu_result cuFuncSetAttribute(mdgpud_cu_function f,
						mdgpud_cu_function_attribute a,
						int v)
{
	bool ok;

	switch (a) {
	case MDGPUD_CU_FUNC_ATTR_MAX_DYNAMIC_SHARED_SIZE_BYTES:
		ok = v >= 0 && v <= FAKE_BLOCK_SMEM_OPTIN;
		break;
	case MDGPUD_CU_FUNC_ATTR_PREFERRED_SHARED_MEMORY_CARVEOUT:
		ok = v >= -1 && v <= 100;
		break;
	case MDGPUD_CU_FUNC_ATTR_REQUIRED_CLUSTER_WIDTH:
	case MDGPUD_CU_FUNC_ATTR_REQUIRED_CLUSTER_HEIGHT:
	case MDGPUD_CU_FUNC_ATTR_REQUIRED_CLUSTER_DEPTH:
		ok = v >= 0 && v <= 16;
		break;
	case MDGPUD_CU_FUNC_ATTR_NON_PORTABLE_CLUSTER_SIZE_ALLOWED:
		ok = v == 0 || v == 1;
		break;
	case MDGPUD_CU_FUNC_ATTR_CLUSTER_SCHEDULING_POLICY_PREFERENCE:
		ok = v >= 0 && v <= 2;
		break;
	default:
		ok = false;	/* read-only */
	}
	if (!ok)
		return MDGPUD_CUDA_ERROR_INVALID_VALUE;
	f->attr[a] = v;
	return 0;
}

FAKE_EXPORT mdgpud_cu_result cuFuncSetCacheConfig(mdgpud_cu_function f,
						  mdgpud_cu_func_cache c)
{
	if (c > MDGPUD_CU_FUNC_CACHE_PREFER_EQUAL)
		return MDGPUD_CUDA_ERROR_INVALID_VALUE;
	f->cache_config = (int)c;
	return 0;
}

/* Blocks of f that fit one SM (H100-like: 64 warps, 32 blocks, 228 KiB). */
static int fake_blocks_per_sm(const struct CUfunc_st *f, int block,
			      size_t dyn)
{
	int warps = (block + 31) / 32, n = FAKE_SM_WARPS / warps;

	if (n > FAKE_SM_BLOCKS)
		n = FAKE_SM_BLOCKS;
	if (dyn > (size_t)f->attr[MDGPUD_CU_FUNC_ATTR_MAX_DYNAMIC_SHARED_SIZE_BYTES])
		return 0;
	if (dyn) {
		size_t by_smem = FAKE_SM_SMEM / (dyn + FAKE_BLOCK_SMEM_RESERVED);

		if ((size_t)n > by_smem)
			n = (int)by_smem;
	}
	return n;
}

FAKE_EXPORT mdgpud_cu_result
cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *n,
						     mdgpud_cu_function f,
						     int block, size_t dyn,
						     unsigned int flags)
{
	if (block <= 0 || block > 1024 ||
	    flags & ~MDGPUD_CU_OCCUPANCY_DISABLE_CACHING_OVERRIDE)
		return MDGPUD_CUDA_ERROR_INVALID_VALUE;
	*n = fake_blocks_per_sm(f, block, dyn);
	return 0;
}

FAKE_EXPORT mdgpud_cu_result
cuOccupancyAvailableDynamicSMemPerBlock(size_t *smem, mdgpud_cu_function f,
					int nblocks, int block)
{
	int warps = (block + 31) / 32;
	size_t per;

	if (block <= 0 || block > 1024 || nblocks <= 0)
		return MDGPUD_CUDA_ERROR_INVALID_VALUE;
	if (nblocks > FAKE_SM_BLOCKS || nblocks * warps > FAKE_SM_WARPS) {
		*smem = 0;
		return 0;
	}
	per = FAKE_SM_SMEM / (size_t)nblocks - FAKE_BLOCK_SMEM_RESERVED;
	if (per > (size_t)f->attr[MDGPUD_CU_FUNC_ATTR_MAX_DYNAMIC_SHARED_SIZE_BYTES])
		per = (size_t)f->attr[MDGPUD_CU_FUNC_ATTR_MAX_DYNAMIC_SHARED_SIZE_BYTES];
	*smem = per;
	return 0;
}

/*
 * Clusters of the launch that fit the GPU at once: its blocks per SM
 * over the cluster's size, times the SMs (portable clusters: at most 8
 * blocks; 16 once NON_PORTABLE_CLUSTER_SIZE_ALLOWED is set).
 */
FAKE_EXPORT mdgpud_cu_result
cuOccupancyMaxActiveClusters(int *n, mdgpud_cu_function f,
			     const struct CUlaunchConfig_st *config)
{
	const struct mdgpud_cu_launch_config *c = (const void *)config;
	unsigned int cx = 1, cy = 1, cz = 1, cs, max;
	int per_sm;

	if (!c || !c->block_x || c->block_x * c->block_y * c->block_z > 1024)
		return MDGPUD_CUDA_ERROR_INVALID_VALUE;
	for (unsigned int i = 0; i < c->num_attrs; i++)
		if (c->attrs[i].id ==
		    MDGPUD_CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION) {
			cx = c->attrs[i].value.cluster_dim.x;
			cy = c->attrs[i].value.cluster_dim.y;
			cz = c->attrs[i].value.cluster_dim.z;
		}
	if (!cx || !cy || !cz || c->grid_x % cx || c->grid_y % cy ||
	    c->grid_z % cz)
		return MDGPUD_CUDA_ERROR_INVALID_VALUE;
	cs = cx * cy * cz;
	max = f->attr[MDGPUD_CU_FUNC_ATTR_NON_PORTABLE_CLUSTER_SIZE_ALLOWED] ?
	      16 : 8;
	if (cs > max) {
		*n = 0;
		return 0;
	}
	per_sm = fake_blocks_per_sm(f, (int)(c->block_x * c->block_y *
					     c->block_z), c->shared_bytes);
	*n = (int)((unsigned int)per_sm * FAKE_SM_COUNT / cs);
	return 0;
}

/*
 * The largest cluster of the launch, in blocks, its own cluster ignored
 * as the driver ignores it: the function's required cluster if it has
 * one, else 8 (portable) or 16 (NON_PORTABLE_CLUSTER_SIZE_ALLOWED); 0
 * when not one block of the launch fits an SM.
 */
FAKE_EXPORT mdgpud_cu_result
cuOccupancyMaxPotentialClusterSize(int *n, mdgpud_cu_function f,
				   const struct CUlaunchConfig_st *config)
{
	const struct mdgpud_cu_launch_config *c = (const void *)config;
	int rx = f->attr[MDGPUD_CU_FUNC_ATTR_REQUIRED_CLUSTER_WIDTH];
	int ry = f->attr[MDGPUD_CU_FUNC_ATTR_REQUIRED_CLUSTER_HEIGHT];
	int rz = f->attr[MDGPUD_CU_FUNC_ATTR_REQUIRED_CLUSTER_DEPTH];
	bool non_portable =
		f->attr[MDGPUD_CU_FUNC_ATTR_NON_PORTABLE_CLUSTER_SIZE_ALLOWED];

	if (!n || !c || !c->block_x ||
	    c->block_x * c->block_y * c->block_z > 1024)
		return MDGPUD_CUDA_ERROR_INVALID_VALUE;
	if (!fake_blocks_per_sm(f, (int)(c->block_x * c->block_y *
					 c->block_z), c->shared_bytes))
		*n = 0;
	else if (rx && ry && rz)
		*n = rx * ry * rz;
	else
		*n = non_portable ? 16 : 8;
	return 0;
}

static void fake_stack_grow(size_t bytes);

/*
 * Packs the parameters, as the driver does, into a copy of the launch's;
 * grows the context's stack to f's local memory, which the driver keeps.
 */
mdgpud_cu_result fake_kernel_prepare(mdgpud_cu_function f,
				     void **kernel_params, void **extra,
				     uint8_t **blob)
{
	const uint8_t *args = NULL;
	size_t len = 0;

	*blob = NULL;
	if (kernel_params && extra)
		return MDGPUD_CUDA_ERROR_INVALID_VALUE;
	if (extra) {
		for (int i = 0; extra[i] !=
		     (void *)(uintptr_t)MDGPUD_CU_LAUNCH_PARAM_END_AS_INT;
		     i += 2) {
			if (extra[i] == (void *)(uintptr_t)
				MDGPUD_CU_LAUNCH_PARAM_BUFFER_POINTER_AS_INT)
				args = extra[i + 1];
			else if (extra[i] == (void *)(uintptr_t)
				 MDGPUD_CU_LAUNCH_PARAM_BUFFER_SIZE_AS_INT)
				len = *(size_t *)extra[i + 1];
			else
				return MDGPUD_CUDA_ERROR_INVALID_VALUE;
		}
		if (len != f->param_bytes || (len && !args))
			return MDGPUD_CUDA_ERROR_INVALID_VALUE;
	} else if (!kernel_params && f->nparams) {
		return MDGPUD_CUDA_ERROR_INVALID_VALUE;
	}
	if (!f->k)
		return MDGPUD_CUDA_ERROR_NOT_SUPPORTED;
	fake_stack_grow(f->local_bytes);
	if (f->param_bytes) {
		*blob = calloc(1, f->param_bytes);
		if (!*blob)
			return MDGPUD_CUDA_ERROR_OUT_OF_MEMORY;
		if (kernel_params)
			for (uint32_t i = 0; i < f->nparams; i++)
				memcpy(*blob + f->off[i], kernel_params[i],
				       f->size[i]);
		else
			memcpy(*blob, args, len);
	}
	atomic_fetch_add(&f->mod->refs, 1);
	return 0;
}

mdgpud_cu_result fake_kernel_run(mdgpud_cu_function f, const uint8_t *blob,
				 unsigned int threads,
				 const struct fake_launch_info *how)
{
	mdgpud_cu_result r;

	fake_cur_launch = how;
	r = f->k->fn(f, blob, threads);
	fake_cur_launch = NULL;
	return r;
}

void fake_kernel_release(mdgpud_cu_function f)
{
	fake_module_put(f->mod);
}

/* ---- device attributes and context limits ----------------------------- */

/* An H100 SXM's answers (driver 580) for the attributes programs read. */
static const struct {
	uint16_t attr;
	int value;
} fake_attrs[] = {
	{ 1, 1024 }, { 2, 1024 }, { 3, 1024 }, { 4, 64 },
	{ 5, 2147483647 }, { 6, 65535 }, { 7, 65535 },
	{ 8, 49152 }, { 9, 65536 }, { 10, 32 }, { 11, 2147483647 },
	{ 12, 65536 }, { 13, 1980000 }, { 14, 512 }, { 15, 1 },
	{ MDGPUD_CU_DEV_ATTR_MULTIPROCESSOR_COUNT, FAKE_SM_COUNT },
	{ 17, 0 }, { 18, 0 }, { 19, 1 }, { 20, 0 }, { 30, 512 }, { 31, 1 },
	{ 32, 1 }, { 33, 0x65 }, { 34, 0 }, { 35, 0 }, { 36, 2619000 },
	{ 37, 5120 }, { 38, 52428800 }, { 39, 2048 }, { 40, 3 }, { 41, 1 },
	{ 50, 0 }, { 51, 32 }, { 75, 9 }, { 76, 0 }, { 78, 1 }, { 79, 1 },
	{ 80, 1 }, { 81, 233472 }, { 82, 65536 }, { 83, 1 }, { 84, 0 },
	{ 86, 0 }, { 87, 2 }, { 88, 0 }, { 89, 1 }, { 90, 1 }, { 91, 0 },
	{ 95, 1 }, { 97, 232448 }, { 98, 0 }, { 99, 1 }, { 102, 1 },
	{ 106, 32 }, { 107, 1 }, { 108, 83886080 }, { 109, 134213632 },
	{ 111, 1024 }, { 115, 1 }, { 120, 1 }, { 122, 1 }, { 123, 1 },
	{ 124, 1 }, { 126, 4 },
	/*
	 * What NVIDIA's runtime also reads to fill cudaDeviceProp at its
	 * first call, which fails ("initialization error") on any read that
	 * fails: texture and surface limits of compute capability 9.0, the
	 * multi-GPU board group, unified function pointers, the H100 SXM's
	 * PCI device and subsystem ids.
	 */
	{ 21, 131072 }, { 22, 131072 }, { 23, 65536 }, { 24, 16384 },
	{ 25, 16384 }, { 26, 16384 }, { 27, 32768 }, { 28, 32768 },
	{ 29, 2048 }, { 42, 32768 }, { 43, 2048 }, { 45, 32768 },
	{ 46, 32768 }, { 47, 8192 }, { 48, 8192 }, { 49, 32768 },
	{ 52, 32768 }, { 53, 32768 }, { 54, 2046 }, { 55, 32768 },
	{ 56, 131072 }, { 57, 65536 }, { 58, 16384 }, { 59, 16384 },
	{ 60, 16384 }, { 61, 32768 }, { 62, 2048 }, { 63, 32768 },
	{ 64, 32768 }, { 65, 2048 }, { 66, 32768 }, { 67, 32768 },
	{ 68, 2046 }, { 70, 131072 }, { 71, 65000 }, { 72, 2097120 },
	{ 73, 32768 }, { 74, 32768 }, { 77, 32768 }, { 85, 0 }, { 129, 0 },
	{ 139, 0x2330 }, { 140, 0x16c110de },
};

int fake_device_attr(unsigned int attr, int *value)
{
	for (size_t i = 0; i < sizeof(fake_attrs) / sizeof(fake_attrs[0]); i++)
		if (fake_attrs[i].attr == attr) {
			*value = fake_attrs[i].value;
			return 0;
		}
	return -1;
}

/* One context per worker process: its limits, at the H100's defaults. */
static size_t fake_limits[MDGPUD_CU_LIMIT_MAX] = {
	[MDGPUD_CU_LIMIT_STACK_SIZE] = 1024,
	[MDGPUD_CU_LIMIT_PRINTF_FIFO_SIZE] = 1 << 20,
	[MDGPUD_CU_LIMIT_MALLOC_HEAP_SIZE] = 8 << 20,
	[MDGPUD_CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH] = 2,
	[MDGPUD_CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT] = 2048,
	[MDGPUD_CU_LIMIT_MAX_L2_FETCH_GRANULARITY] = 64,
	[MDGPUD_CU_LIMIT_SHMEM_SIZE] = 232448,
	[MDGPUD_CU_LIMIT_CIG_SHMEM_FALLBACK_ENABLED] = 1,
};

/* A launch of a kernel whose frame is larger than the stack grows the
 * stack to it (16-byte granular), as the driver does; it stays. */
static void fake_stack_grow(size_t bytes)
{
	bytes = (bytes + 15) & ~(size_t)15;
	if (bytes > fake_limits[MDGPUD_CU_LIMIT_STACK_SIZE])
		fake_limits[MDGPUD_CU_LIMIT_STACK_SIZE] = bytes;
}

FAKE_EXPORT mdgpud_cu_result cuCtxGetLimit(size_t *v, mdgpud_cu_limit l)
{
	if (l >= MDGPUD_CU_LIMIT_MAX)
		return MDGPUD_CUDA_ERROR_INVALID_VALUE;
	*v = fake_limits[l];
	return fake_sticky;
}

/* The stack is kept 16-byte granular, as the driver rounds it. */
FAKE_EXPORT mdgpud_cu_result cuCtxSetLimit(mdgpud_cu_limit l, size_t v)
{
	if (fake_sticky)
		return fake_sticky;
	switch (l) {
	case MDGPUD_CU_LIMIT_STACK_SIZE:
		fake_limits[l] = (v + 15) & ~(size_t)15;
		return 0;
	case MDGPUD_CU_LIMIT_PRINTF_FIFO_SIZE:
	case MDGPUD_CU_LIMIT_MALLOC_HEAP_SIZE:
	case MDGPUD_CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH:
	case MDGPUD_CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT:
		fake_limits[l] = v;
		return 0;
	case MDGPUD_CU_LIMIT_MAX_L2_FETCH_GRANULARITY:
		if (v > 128)
			return MDGPUD_CUDA_ERROR_INVALID_VALUE;
		fake_limits[l] = v;
		return 0;
	case MDGPUD_CU_LIMIT_PERSISTING_L2_CACHE_SIZE:
		fake_limits[l] = v;
		return 0;
	default:
		return MDGPUD_CUDA_ERROR_INVALID_VALUE;	/* query-only */
	}
}
