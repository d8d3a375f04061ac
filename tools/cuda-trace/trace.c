// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * cuda-trace: a libcuda.so.1 that stands in front of another one (NVIDIA's
 * or mdgpu's, PROXY_REAL) and records what a program asks of the driver:
 *
 *  - every entry point obtained through cuGetProcAddress or linked directly
 *    is handed out as a counting trampoline; the counts are printed at exit;
 *  - every cuGetExportTable UUID is logged;
 *  - PROXY_ERRORS: entry points whose parameters all travel in integer
 *    registers (at most TRACE_REG_ARGS of them) are handed out as logging
 *    wrappers instead: each failing call is logged with its arguments;
 *    PROXY_TRACE: every call; PROXY_VALS: with the value a getter wrote;
 *  - PROXY_LOG_TABLE: calls into up to TRACE_TABLES private export tables,
 *    with the caller's library and offset and the memory the first four
 *    arguments point to, before and after (PROXY_D32: 40 bytes of it);
 *  - PROXY_WRAP_TABLES: the slots of every export table counted;
 *  - cuLibraryLoadData and cuModuleLoadDataEx: their JIT and library
 *    options.
 * tools/cuda-trace/README.md describes the variables and the output.
 * Everything goes to stderr, one fprintf per line, so lines of different
 * threads do not mix.
 */
#include <ctype.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cuda.h>

#include "trace.h"

#define EXPORT __attribute__((visibility("default")))
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Where the real driver is when neither PROXY_REAL nor run.sh says. */
#define TRACE_DEFAULT_REAL "/usr/lib/x86_64-linux-gnu/libcuda.so.1"
/* Export tables whose slot 0 is below this hold their size in bytes
 * there; above it, slot 0 is already a function. */
#define TRACE_TABLE_SIZE_MAX 4096
/* Bytes PROXY_D32 dumps at each argument. */
#define TRACE_DUMP_BYTES 40
/* Arguments whose pointees the table log reads. */
#define TRACE_PEEK_ARGS 4
/* Lowest and one past the highest user address an argument is read at. */
#define TRACE_ADDR_MIN 65536UL
#define TRACE_ADDR_END (1UL << 47)

unsigned long trace_count[TRACE_SLOTS];
void *trace_target[TRACE_SLOTS];

static struct {
	bool errors;		/* PROXY_ERRORS */
	bool trace;		/* PROXY_TRACE (with PROXY_ERRORS) */
	bool vals;		/* PROXY_VALS */
	bool gpa;		/* PROXY_GPA */
	bool wrap_tables;	/* PROXY_WRAP_TABLES */
	bool d32;		/* PROXY_D32 */
	unsigned ntables;	/* PROXY_LOG_TABLE=uuid8[:slots][,...] */
	char table_id[TRACE_TABLES][9];
	unsigned table_slots[TRACE_TABLES];
} opt;

static void *real;
static pthread_mutex_t slot_lock = PTHREAD_MUTEX_INITIALIZER;
static char *slot_name[TRACE_SLOTS];
static const struct trace_decl *slot_decl[TRACE_SLOTS];
static unsigned nslots;

/* Logged export tables: the real slots and the copy handed out. */
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	void *const *src;
	void **copy;
	void *real[TRACE_TABLE_SLOTS];
} tables[TRACE_TABLES];

static void *real_sym(const char *name)
{
	return dlsym(real, name);
}

/* Reads len bytes at addr, or returns false where they are not mapped:
 * arguments of private tables are guessed to be pointers. */
static bool peek(uintptr_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len };
	struct iovec remote = { (void *)addr, len };

	if (addr < TRACE_ADDR_MIN || addr >= TRACE_ADDR_END)
		return false;
	return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) ==
	       (ssize_t)len;
}

static uintptr_t peek_word(uintptr_t addr)
{
	uintptr_t v = 0;

	return peek(addr, &v, sizeof(v)) ? v : 0;
}

/* -------------------------------------------------------------------- */
/* Declarations generated from cuda.h.                                   */

static int decl_cmp(const void *key, const void *elem)
{
	return strcmp(key, ((const struct trace_decl *)elem)->name);
}

/* The declaration of a slot name "[direct:]cuName[@version[+f]]". */
static const struct trace_decl *decl_of(const char *slot)
{
	char base[128];
	size_t len;

	if (!strncmp(slot, "direct:", 7))
		slot += 7;
	len = strcspn(slot, "@");
	if (len >= sizeof(base))
		return NULL;
	memcpy(base, slot, len);
	base[len] = '\0';
	return bsearch(base, trace_decls, trace_decl_count,
		       sizeof(trace_decls[0]), decl_cmp);
}

/* -------------------------------------------------------------------- */
/* Slots: one counting trampoline per (target, name).                    */

static void *slot(void *target, const char *name)
{
	const struct trace_decl *d;
	unsigned i;

	if (!target)
		return NULL;
	pthread_mutex_lock(&slot_lock);
	for (i = 0; i < nslots; i++)
		if (trace_target[i] == target && !strcmp(slot_name[i], name))
			break;
	if (i == nslots) {
		char *copy = strdup(name);

		if (nslots == TRACE_SLOTS || !copy) {
			pthread_mutex_unlock(&slot_lock);
			free(copy);
			fprintf(stderr, "[proxy] no slot left for %s: not "
				"counted\n", name);
			return target;
		}
		slot_name[i] = copy;
		slot_decl[i] = decl_of(name);
		trace_target[i] = target;
		nslots++;
	}
	pthread_mutex_unlock(&slot_lock);
	d = slot_decl[i];
	if (opt.errors && d && d->regs_only && d->nparams <= TRACE_REG_ARGS)
		return (void *)trace_wrappers[i];
	return trace_tramps[i];
}

uintptr_t trace_call(unsigned i, uintptr_t a0, uintptr_t a1, uintptr_t a2,
		     uintptr_t a3, uintptr_t a4, uintptr_t a5)
{
	trace_fn fn = (trace_fn)trace_tramps[i];
	const struct trace_decl *d = slot_decl[i];
	uintptr_t a[TRACE_REG_ARGS] = { a0, a1, a2, a3, a4, a5 };
	uintptr_t r = fn(a0, a1, a2, a3, a4, a5);
	CUresult res = (CUresult)r;
	char args[TRACE_REG_ARGS * 20 + 1] = "", val[40] = "";
	size_t at = 0;

	if (!res && !opt.trace)
		return r;
	for (unsigned k = 0; k < d->nparams && at < sizeof(args); k++)
		at += (size_t)snprintf(args + at, sizeof(args) - at, "%s%#lx",
				       k ? ", " : "", (unsigned long)a[k]);
	if (opt.vals && !res && d->out_size) {
		uint64_t v = 0;

		/* Little-endian: the low bytes of v hold the value. */
		if (peek(a0, &v, d->out_size))
			snprintf(val, sizeof(val), " [*a0 %#llx]",
				 (unsigned long long)v);
	}
	fprintf(stderr, "[%s] %s(%s) = %d%s\n", res ? "err" : "trc",
		slot_name[i], args, (int)res, val);
	return r;
}

/* -------------------------------------------------------------------- */
/* Entry points logged with their details, whatever PROXY_ERRORS says.   */

static void log_options(const char *what, unsigned n, const int *keys,
			void *const *vals)
{
	for (unsigned k = 0; keys && k < n; k++)
		fprintf(stderr, "[lld]   %s option %d = %p\n", what, keys[k],
			vals ? vals[k] : NULL);
}

static uint32_t image_magic(const void *image)
{
	uint32_t magic = 0;

	peek((uintptr_t)image, &magic, sizeof(magic));
	return magic;
}

static CUresult (*real_lld)(CUlibrary *, const void *, CUjit_option *,
			    void **, unsigned, CUlibraryOption *, void **,
			    unsigned);

static CUresult CUDAAPI lld(CUlibrary *lib, const void *code,
			    CUjit_option *jit, void **jitv, unsigned njit,
			    CUlibraryOption *lo, void **lv, unsigned nlo)
{
	CUresult r = real_lld(lib, code, jit, jitv, njit, lo, lv, nlo);

	fprintf(stderr, "[lld] cuLibraryLoadData magic %08x = %d, %u JIT "
		"options, %u library options\n", image_magic(code), r, njit,
		nlo);
	log_options("JIT", njit, (const int *)jit, jitv);
	log_options("library", nlo, (const int *)lo, lv);
	return r;
}

static CUresult (*real_mlde)(CUmodule *, const void *, unsigned,
			     CUjit_option *, void **);

static CUresult CUDAAPI mlde(CUmodule *mod, const void *image, unsigned n,
			     CUjit_option *keys, void **vals)
{
	CUresult r = real_mlde(mod, image, n, keys, vals);

	fprintf(stderr, "[lld] cuModuleLoadDataEx magic %08x = %d, %u JIT "
		"options\n", image_magic(image), r, n);
	log_options("JIT", n, (const int *)keys, vals);
	return r;
}

/* The detail loggers call the real entry point through a counting slot
 * (the first one obtained: each of these has one version). */
static const struct {
	const char *name;
	void *fn;
	void **next;
} specials[] = {
	{ "cuLibraryLoadData", (void *)lld, (void **)&real_lld },
	{ "cuModuleLoadDataEx", (void *)mlde, (void **)&real_mlde },
};

static void *special(const char *sym, void *target, const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(specials); i++) {
		void *expected = NULL;

		if (strcmp(sym, specials[i].name))
			continue;
		__atomic_compare_exchange_n(specials[i].next, &expected,
					    slot(target, name), false,
					    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
		return specials[i].fn;
	}
	return NULL;
}

/* -------------------------------------------------------------------- */
/* cuGetProcAddress.                                                     */

/* A real library whose references to its own cu* symbols are not bound
 * at link time (mdgpu's) reaches this library's symbols instead, which
 * come first in the program's lookup scope: its cuGetProcAddress then
 * hands out this library's stubs.  They are traded for the real
 * functions, so that one call is logged once. */
static void *unwrap(void *fn)
{
	Dl_info self, di;
	void *p;

	if (!dladdr((void *)cuGetExportTable, &self) || !dladdr(fn, &di) ||
	    di.dli_fbase != self.dli_fbase || !di.dli_sname ||
	    di.dli_saddr != fn)
		return fn;
	p = real_sym(di.dli_sname);
	return p ? p : fn;
}

EXPORT CUresult CUDAAPI cuGetProcAddress_v2(const char *sym, void **pfn,
					    int ver, cuuint64_t flags,
					    CUdriverProcAddressQueryResult *st);
EXPORT CUresult CUDAAPI cuGetProcAddress(const char *sym, void **pfn, int ver,
					 cuuint64_t flags);
EXPORT CUresult CUDAAPI cuGetExportTable(const void **tbl,
					 const CUuuid *id);

EXPORT CUresult CUDAAPI cuGetProcAddress_v2(const char *sym, void **pfn,
					    int ver, cuuint64_t flags,
					    CUdriverProcAddressQueryResult *st)
{
	CUresult (*fn)(const char *, void **, int, cuuint64_t,
		       CUdriverProcAddressQueryResult *) =
		(CUresult (*)(const char *, void **, int, cuuint64_t,
			      CUdriverProcAddressQueryResult *))
		real_sym("cuGetProcAddress_v2");
	CUdriverProcAddressQueryResult st2 = CU_GET_PROC_ADDRESS_SUCCESS;
	char name[160];
	void *sp;
	CUresult r;

	if (!fn)
		return CUDA_ERROR_NOT_SUPPORTED;
	r = fn(sym, pfn, ver, flags, st ? st : &st2);
	if (opt.gpa)
		fprintf(stderr, "[gpa] %s ver %d flags %llu = %d status %d "
			"pfn %s\n", sym ? sym : "(null)", ver,
			(unsigned long long)flags, r, st ? (int)*st : (int)st2,
			pfn && *pfn ? "set" : "NULL");
	if (r || !sym || !pfn || !*pfn)
		return r;
	/* Lookups made through a returned cuGetProcAddress must come back
	 * here too; the 4-argument version for callers that asked for it. */
	if (!strcmp(sym, "cuGetProcAddress")) {
		*pfn = *pfn == real_sym("cuGetProcAddress") ?
		       (void *)cuGetProcAddress : (void *)cuGetProcAddress_v2;
		return r;
	}
	if (!strcmp(sym, "cuGetExportTable")) {
		*pfn = (void *)cuGetExportTable;
		return r;
	}
	*pfn = unwrap(*pfn);
	snprintf(name, sizeof(name), "%s@%d%s", sym, ver, flags ? "+f" : "");
	sp = special(sym, *pfn, name);
	*pfn = sp ? sp : slot(*pfn, name);
	return r;
}

EXPORT CUresult CUDAAPI cuGetProcAddress(const char *sym, void **pfn, int ver,
					 cuuint64_t flags)
{
	return cuGetProcAddress_v2(sym, pfn, ver, flags, NULL);
}

/* -------------------------------------------------------------------- */
/* Export tables.                                                        */

static const char *lib_of(const void *p, uintptr_t *off)
{
	Dl_info di;

	if (!dladdr(p, &di) || !di.dli_fname) {
		*off = 0;
		return "?";
	}
	*off = (uintptr_t)p - (uintptr_t)di.dli_fbase;
	return di.dli_fname;
}

static void dump(const char *what, unsigned k, uintptr_t addr)
{
	unsigned char b[TRACE_DUMP_BYTES];
	char hex[3 * TRACE_DUMP_BYTES + 1];
	size_t at = 0;

	if (!peek(addr, b, sizeof(b)))
		return;
	for (unsigned i = 0; i < sizeof(b); i++)
		at += (size_t)snprintf(hex + at, sizeof(hex) - at, "%s%02x",
				       i % 8 ? "" : " ", b[i]);
	fprintf(stderr, "        %s a%u:%s\n", what, k, hex);
}

uintptr_t trace_table_call(unsigned t, unsigned i, void *caller,
			   uintptr_t a0, uintptr_t a1, uintptr_t a2,
			   uintptr_t a3, uintptr_t a4, uintptr_t a5)
{
	uintptr_t a[TRACE_REG_ARGS] = { a0, a1, a2, a3, a4, a5 };
	uintptr_t pre[TRACE_PEEK_ARGS], post[TRACE_PEEK_ARGS], off, r;
	const char *lib = lib_of(caller, &off);

	for (unsigned k = 0; k < TRACE_PEEK_ARGS; k++) {
		pre[k] = peek_word(a[k]);
		if (opt.d32)
			dump("pre", k, a[k]);
	}
	r = ((trace_fn)tables[t].real[i])(a0, a1, a2, a3, a4, a5);
	for (unsigned k = 0; k < TRACE_PEEK_ARGS; k++)
		post[k] = peek_word(a[k]);
	fprintf(stderr, "[proxy] T%s[%u](%#lx, %#lx, %#lx, %#lx, %#lx, %#lx) "
		"= %#lx from %s+%#lx\n      pre/post *a0 %#lx/%#lx *a1 "
		"%#lx/%#lx *a2 %#lx/%#lx *a3 %#lx/%#lx\n", opt.table_id[t], i,
		(unsigned long)a0, (unsigned long)a1, (unsigned long)a2,
		(unsigned long)a3, (unsigned long)a4, (unsigned long)a5,
		(unsigned long)r, lib, (unsigned long)off,
		(unsigned long)pre[0], (unsigned long)post[0],
		(unsigned long)pre[1], (unsigned long)post[1],
		(unsigned long)pre[2], (unsigned long)post[2],
		(unsigned long)pre[3], (unsigned long)post[3]);
	for (unsigned k = 0; opt.d32 && k < TRACE_PEEK_ARGS; k++)
		dump("post", k, a[k]);
	return r;
}

/* Hands out a copy of table src whose slots log each call (PROXY_LOG_TABLE
 * entry t).  A table with a size in slot 0 has its other slots wrapped;
 * one without has the number of slots PROXY_LOG_TABLE gives wrapped from
 * slot 0 on. */
static void log_table(unsigned t, const void **tbl)
{
	void *const *src = *tbl;
	uintptr_t first = (uintptr_t)src[0], off;
	unsigned from = 1, n;

	if (first < TRACE_TABLE_SIZE_MAX) {
		n = (unsigned)(first / sizeof(void *));
	} else {
		from = 0;
		n = opt.table_slots[t];
	}
	if (n <= from || n > TRACE_TABLE_SLOTS) {
		fprintf(stderr, "[proxy] table %s: %u slots, not logged (%s)\n",
			opt.table_id[t], n, first < TRACE_TABLE_SIZE_MAX ?
			"size out of range" : "no size in slot 0: give "
			"PROXY_LOG_TABLE=uuid8:slots");
		return;
	}
	pthread_mutex_lock(&table_lock);
	if (tables[t].src != src) {
		void **copy = calloc(n, sizeof(*copy));

		if (!copy) {
			pthread_mutex_unlock(&table_lock);
			return;
		}
		copy[0] = src[0];
		fprintf(stderr, "[proxy] table %s: %u slots\n",
			opt.table_id[t], n);
		for (unsigned i = from; i < n; i++) {
			Dl_info di;
			const char *lib = lib_of(src[i], &off);

			fprintf(stderr, "[proxy]   slot %u = %p %s+%#lx %s\n",
				i, src[i], lib, (unsigned long)off,
				dladdr(src[i], &di) && di.dli_sname ?
				di.dli_sname : "");
			tables[t].real[i] = src[i];
			copy[i] = (void *)trace_table_wrappers[t][i];
		}
		free(tables[t].copy);
		tables[t].copy = copy;
		tables[t].src = src;
	}
	*tbl = tables[t].copy;
	pthread_mutex_unlock(&table_lock);
}

/* PROXY_WRAP_TABLES: slots up to the first that is not in the real
 * library counted.  The copies live as long as the program. */
static void wrap_table(const char *uuid, const void **tbl)
{
	void *const *src = *tbl;
	void **copy = calloc(TRACE_TABLE_SLOTS, sizeof(*copy));
	Dl_info real_di, di;
	char name[80];
	unsigned n = 0;

	if (!copy || !dladdr(real_sym("cuGetExportTable"), &real_di)) {
		free(copy);
		return;
	}
	for (unsigned i = 0; i < TRACE_TABLE_SLOTS; i++) {
		void *p = (void *)peek_word((uintptr_t)(src + i));

		if (i == 0 && (uintptr_t)src[0] < TRACE_TABLE_SIZE_MAX) {
			copy[0] = src[0];
			continue;
		}
		if (!p || !dladdr(p, &di) || di.dli_fbase != real_di.dli_fbase)
			break;
		snprintf(name, sizeof(name), "T:%s[%u]", uuid, i);
		copy[i] = slot(p, name);
		n = i + 1;
	}
	fprintf(stderr, "[proxy]   slot 0 = %#lx, %u slots counted\n",
		(unsigned long)(uintptr_t)src[0], n);
	*tbl = (const void *)copy;
}

EXPORT CUresult CUDAAPI cuGetExportTable(const void **tbl, const CUuuid *id)
{
	CUresult (*fn)(const void **, const CUuuid *) =
		(CUresult (*)(const void **, const CUuuid *))
		real_sym("cuGetExportTable");
	char uuid[33];
	CUresult r;

	if (!fn)
		return CUDA_ERROR_NOT_SUPPORTED;
	r = fn(tbl, id);
	if (!id)
		return r;
	for (int i = 0; i < 16; i++)
		snprintf(uuid + 2 * i, 3, "%02x", (unsigned char)id->bytes[i]);
	fprintf(stderr, "[proxy] cuGetExportTable %s = %d\n", uuid, r);
	if (r || !tbl || !*tbl)
		return r;
	for (unsigned t = 0; t < opt.ntables; t++) {
		if (!strncmp(uuid, opt.table_id[t], 8)) {
			log_table(t, tbl);
			return r;
		}
	}
	if (opt.wrap_tables)
		wrap_table(uuid, tbl);
	return r;
}

/* -------------------------------------------------------------------- */
/* Start and exit.                                                       */

static bool env_on(const char *name)
{
	const char *v = getenv(name);

	return v && *v && strcmp(v, "0");
}

/* PROXY_LOG_TABLE=uuid8[:slots][,uuid8[:slots]]: uuid8 is the first 8
 * hex digits of the table's UUID as cuGetExportTable's log line shows. */
static void parse_tables(const char *v)
{
	while (v && *v) {
		char *end;
		unsigned t = opt.ntables, k;

		for (k = 0; k < 8 && isxdigit((unsigned char)v[k]); k++)
			;
		if (k != 8 || t == TRACE_TABLES) {
			fprintf(stderr, "[proxy] PROXY_LOG_TABLE: \"%s\" "
				"ignored (at most %d entries of 8 hex "
				"digits)\n", v, TRACE_TABLES);
			return;
		}
		memcpy(opt.table_id[t], v, 8);
		for (k = 0; k < 8; k++)
			opt.table_id[t][k] = (char)tolower(
				(unsigned char)opt.table_id[t][k]);
		v += 8;
		if (*v == ':') {
			unsigned long n = strtoul(v + 1, &end, 10);

			opt.table_slots[t] = n <= TRACE_TABLE_SLOTS ?
					     (unsigned)n : 0;
			v = end;
		}
		opt.ntables++;
		if (*v == ',')
			v++;
	}
}

/* Entry points the real library lacks answer CUDA_ERROR_NOT_SUPPORTED. */
static CUresult CUDAAPI absent(void)
{
	return CUDA_ERROR_NOT_SUPPORTED;
}

__attribute__((constructor)) static void trace_init(void)
{
	const char *path = getenv("PROXY_REAL");
	char name[160];

	opt.errors = env_on("PROXY_ERRORS");
	opt.trace = env_on("PROXY_TRACE");
	opt.vals = env_on("PROXY_VALS");
	opt.gpa = env_on("PROXY_GPA");
	opt.wrap_tables = env_on("PROXY_WRAP_TABLES");
	opt.d32 = env_on("PROXY_D32");
	parse_tables(getenv("PROXY_LOG_TABLE"));
	if (!path || !*path)
		path = TRACE_DEFAULT_REAL;
	real = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!real) {
		fprintf(stderr, "[proxy] cannot open the real driver: %s\n",
			dlerror());
		_exit(127);
	}
	if (real_sym("cuGetExportTable") == (void *)cuGetExportTable) {
		fprintf(stderr, "[proxy] PROXY_REAL=%s is cuda-trace itself\n",
			path);
		_exit(127);
	}
	for (unsigned i = 0; i < trace_direct_count; i++) {
		const char *sym = trace_direct_names[i];
		void *p = real_sym(sym), *sp;

		if (!p) {
			trace_direct[i] = (void *)absent;
			continue;
		}
		snprintf(name, sizeof(name), "direct:%s", sym);
		sp = special(sym, p, name);
		trace_direct[i] = sp ? sp : slot(p, name);
	}
}

__attribute__((destructor)) static void trace_report(void)
{
	unsigned used = 0;

	fprintf(stderr, "[proxy] ---- calls (%u slots) ----\n", nslots);
	for (unsigned i = 0; i < nslots; i++) {
		unsigned long n = __atomic_load_n(&trace_count[i],
						  __ATOMIC_RELAXED);

		if (n) {
			fprintf(stderr, "[proxy] %8lu %s\n", n, slot_name[i]);
			used++;
		}
	}
	fprintf(stderr, "[proxy] %u of %u obtained entry points were called\n",
		used, nslots);
}
