// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Does NVIDIA's cuMemHostRegister pin pages that a driver maps with
 * remap_vmalloc_range()/vm_insert_page() (VM_MIXEDMAP), the shape of
 * mdgpu.ko's aperture?  A BPF mmapable array is mapped with
 * remap_vmalloc_range on vmalloc'd memory (mdgpu_mem.c's call), an
 * AF_PACKET ring with vm_insert_page; a memfd (the socket transport's
 * aperture) is the control.  Each is registered, given a device pointer,
 * and used for an async host -> device -> host round trip.  Needs root
 * (BPF, AF_PACKET).  Documentation/e2e.md quotes its result on the H100.
 * Build: gcc -I/usr/local/cuda/include host-register-pages.c -lcuda
 */
#define _GNU_SOURCE
#include <cuda.h>
#include <errno.h>
#include <linux/bpf.h>
#include <linux/if_packet.h>
#include <linux/if_ether.h>
#include <arpa/inet.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#define SZ (8u << 20)

static void *map_memfd(void)
{
	int fd = memfd_create("gup", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, SZ)) return NULL;
	void *p = mmap(NULL, SZ, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	return p == MAP_FAILED ? NULL : p;
}

static void *map_bpf(void)
{
	union bpf_attr a;
	memset(&a, 0, sizeof(a));
	a.map_type = BPF_MAP_TYPE_ARRAY;
	a.key_size = 4;
	a.value_size = 4096;
	a.max_entries = SZ / 4096;
	a.map_flags = BPF_F_MMAPABLE;
	int fd = syscall(SYS_bpf, BPF_MAP_CREATE, &a, sizeof(a));
	if (fd < 0) { printf("bpf map: %s\n", strerror(errno)); return NULL; }
	void *p = mmap(NULL, SZ, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) { printf("bpf mmap: %s\n", strerror(errno)); return NULL; }
	return p;
}

static void *map_packet(void)
{
	int fd = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
	if (fd < 0) { printf("packet: %s\n", strerror(errno)); return NULL; }
	int v = TPACKET_V2;
	setsockopt(fd, SOL_PACKET, PACKET_VERSION, &v, sizeof(v));
	struct tpacket_req r = { .tp_block_size = 1 << 20, .tp_block_nr = SZ >> 20,
				 .tp_frame_size = 2048, .tp_frame_nr = SZ / 2048 };
	if (setsockopt(fd, SOL_PACKET, PACKET_RX_RING, &r, sizeof(r))) {
		printf("packet ring: %s\n", strerror(errno)); return NULL; }
	void *p = mmap(NULL, SZ, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) { printf("packet mmap: %s\n", strerror(errno)); return NULL; }
	return p;
}

static void try(const char *name, void *p)
{
	CUresult r;
	CUdeviceptr d, dp = 0;
	const char *s;
	if (!p) { printf("%s: no mapping\n", name); return; }
	uint32_t *w = p;
	for (unsigned i = 0; i < SZ / 8; i++) w[i] = i * 2654435761u;
	r = cuMemHostRegister(p, SZ, CU_MEMHOSTREGISTER_DEVICEMAP);
	cuGetErrorName(r, &s);
	printf("%s: cuMemHostRegister(DEVICEMAP) = %s\n", name, s);
	if (r) {
		r = cuMemHostRegister(p, SZ, 0);
		cuGetErrorName(r, &s);
		printf("%s: cuMemHostRegister(0) = %s\n", name, s);
		if (r) return;
	}
	cuMemHostGetDevicePointer(&dp, p, 0);
	cuMemAlloc(&d, SZ / 2);
	CUstream st; cuStreamCreate(&st, CU_STREAM_NON_BLOCKING);
	/* first half -> device (async: DMA from the pinned pages), device -> second half */
	r = cuMemcpyHtoDAsync(d, p, SZ / 2, st);
	if (!r) r = cuMemcpyDtoHAsync((char *)p + SZ / 2, d, SZ / 2, st);
	if (!r) r = cuStreamSynchronize(st);
	cuGetErrorName(r, &s);
	int eq = !memcmp(p, (char *)p + SZ / 2, SZ / 2);
	printf("%s: device pointer %s, round trip %s, halves %s\n", name,
	       dp ? "yes" : "no", s, eq ? "EQUAL" : "DIFFER");
	cuMemFree(d);
	cuMemHostUnregister(p);
}

int main(void)
{
	CUdevice dev; CUcontext c;
	if (cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&c, dev) || cuCtxSetCurrent(c))
		return 1;
	try("memfd", map_memfd());
	try("bpf-array(remap_vmalloc_range)", map_bpf());
	try("af_packet(vm_insert_page)", map_packet());
	return 0;
}
