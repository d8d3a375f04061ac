// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * cuclient.c EXPECTED_LIBCUDA: built by check-packaging.sh.  Loads
 * "libcuda.so.1" as CUDA programs do (the loader's search, here
 * LD_LIBRARY_PATH), checks that the file loaded is EXPECTED_LIBCUDA, and
 * runs a driver-API round trip on it: init, one device, a context, 4 KiB
 * set on the device and read back.  Written without cuda.h: the
 * prototypes below are the driver API's.
 */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int (*cu_init_t)(unsigned int);
typedef int (*cu_count_t)(int *);
typedef int (*cu_get_t)(int *, int);
typedef int (*cu_name_t)(char *, int, int);
typedef int (*cu_ctx_create_t)(void **, unsigned int, int);
typedef int (*cu_ctx_destroy_t)(void *);
typedef int (*cu_alloc_t)(unsigned long long *, size_t);
typedef int (*cu_free_t)(unsigned long long);
typedef int (*cu_memset_t)(unsigned long long, unsigned char, size_t);
typedef int (*cu_dtoh_t)(void *, unsigned long long, size_t);

#define CU_BYTES	4096

static void *sym(void *h, const char *name)
{
	void *p = dlsym(h, name);

	if (!p) {
		printf("no %s in libcuda.so.1\n", name);
		exit(1);
	}
	return p;
}

int main(int argc, char **argv)
{
	char want[PATH_MAX], got[PATH_MAX], name[128];
	unsigned char buf[CU_BYTES];
	unsigned long long p;
	void *h, *ctx;
	int n = 0, dev, r;
	Dl_info di;

	if (argc != 2 || !realpath(argv[1], want))
		return 2;
	h = dlopen("libcuda.so.1", RTLD_NOW);
	if (!h) {
		printf("dlopen: %s\n", dlerror());
		return 1;
	}
	if (!dladdr(sym(h, "cuInit"), &di) || !realpath(di.dli_fname, got) ||
	    strcmp(got, want)) {
		printf("libcuda.so.1 loaded from %s, not %s\n", di.dli_fname,
		       want);
		return 1;
	}
	r = ((cu_init_t)sym(h, "cuInit"))(0);
	if (!r)
		r = ((cu_count_t)sym(h, "cuDeviceGetCount"))(&n);
	if (!r)
		r = n == 1 ? ((cu_get_t)sym(h, "cuDeviceGet"))(&dev, 0) : -1;
	if (!r)
		r = ((cu_name_t)sym(h, "cuDeviceGetName"))(name, sizeof(name),
							    dev);
	if (!r)
		r = ((cu_ctx_create_t)sym(h, "cuCtxCreate_v2"))(&ctx, 0, dev);
	if (!r)
		r = ((cu_alloc_t)sym(h, "cuMemAlloc_v2"))(&p, CU_BYTES);
	if (!r)
		r = ((cu_memset_t)sym(h, "cuMemsetD8_v2"))(p, 0x3c, CU_BYTES);
	if (!r)
		r = ((cu_dtoh_t)sym(h, "cuMemcpyDtoH_v2"))(buf, p, CU_BYTES);
	for (int i = 0; !r && i < CU_BYTES; i++)
		if (buf[i] != 0x3c)
			r = -1;
	if (r) {
		printf("driver API round trip failed: %d (devices %d)\n", r, n);
		return 1;
	}
	((cu_free_t)sym(h, "cuMemFree_v2"))(p);
	((cu_ctx_destroy_t)sym(h, "cuCtxDestroy_v2"))(ctx);
	printf("%s: device '%s', 4 KiB set and read back\n", got, name);
	return 0;
}
