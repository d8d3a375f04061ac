// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The worker's memory: device allocations, scrubbed to zero before they
 * are freed, and the host regions the supervisor shares (region 0 is the
 * staging area of the shared memfd, the others come as fds over the
 * socket).
 */
#include "worker.h"
#include "array.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

/* cuMemAlloc's page: larger allocations take whole pages (measured). */
#define MDGPUD_WORKER_GPU_PAGE		(2ull << 20)
#define MDGPUD_WORKER_SUBALLOC_MIN	512ull
/* Initial capacities of the tables of allocations and regions. */
#define MDGPUD_WORKER_ALLOCS_FIRST	64u
#define MDGPUD_WORKER_REGIONS_FIRST	1u
/* Region numbers the supervisor may use. */
#define MDGPUD_WORKER_REGION_MAX	(1u << 20)

/* Grows regions[] so that `region` is addressable. */
static int mdgpud_worker_mem_regions_grow(struct mdgpud_worker *w,
					  uint64_t region)
{
	void *base = w->regions;
	int ret;

	ret = mdgpud_worker_array_grow(&base, &w->cap_regions, region + 1,
				       sizeof(*w->regions),
				       MDGPUD_WORKER_REGIONS_FIRST, SIZE_MAX);
	if (ret)
		return ret;
	w->regions = base;
	w->nr_regions = region + 1;
	return 0;
}

/* The staging area is region 0; pin it for DMA-speed bounces. */
int mdgpud_worker_mem_init(struct mdgpud_worker *w)
{
	if (mdgpud_worker_mem_regions_grow(w, MDGPUD_CUDA_RPC_REGION_STAGING))
		return -ENOMEM;
	w->regions[0].ptr = w->shm->staging;
	w->regions[0].size = sizeof(w->shm->staging);
	if (!w->cu.mem_host_register(w->shm->staging, sizeof(w->shm->staging),
				     MDGPUD_CU_MEMHOSTREGISTER_PORTABLE))
		w->regions[0].registered = 1;
	return 0;
}

/* [off, off + len) of a mapped region, or NULL. */
uint8_t *mdgpud_worker_mem_host(struct mdgpud_worker *w, uint64_t region,
				uint64_t off, uint64_t len)
{
	struct mdgpud_worker_region *r;

	if (region >= w->nr_regions)
		return NULL;
	r = &w->regions[region];
	if (!r->ptr || off > r->size || len > r->size - off)
		return NULL;
	return r->ptr + off;
}

/* Receives the fd of a region over the socket, with its number as tag. */
static int mdgpud_worker_mem_recv_fd(struct mdgpud_worker *w, uint32_t *tag)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct msghdr mh = { 0 };
	struct cmsghdr *cm;
	struct iovec iov;
	int fd = -1;

	iov.iov_base = tag;
	iov.iov_len = sizeof(*tag);
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = cbuf;
	mh.msg_controllen = sizeof(cbuf);
	if (recvmsg(w->sock, &mh, MSG_CMSG_CLOEXEC) != sizeof(*tag))
		return -EPROTO;
	for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm))
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS)
			memcpy(&fd, CMSG_DATA(cm), sizeof(fd));
	if (fd < 0)
		return -EPROTO;
	return fd;
}

/*
 * A tenant's memory (MDGPUD_CUDA_MAP_F_CLIENT): mapped at `addr` when
 * that range is free in this process, so that the device address the
 * driver gives it equals the tenant's pointer, else anywhere.
 */
static void *mdgpud_worker_mem_map_client(int fd, uint64_t off,
					  uint64_t size, uint64_t addr,
					  int prot)
{
	void *p = MAP_FAILED;

	if (addr && addr <= UINTPTR_MAX - size)
		p = mmap((void *)(uintptr_t)addr, size, prot,
			 MAP_SHARED | MAP_FIXED_NOREPLACE, fd, (off_t)off);
	if (p == MAP_FAILED)
		p = mmap(NULL, size, prot, MAP_SHARED, fd, (off_t)off);
	return p;
}

/*
 * Maps [off, off + size) of the fd that comes with the request; flags
 * MDGPUD_CUDA_MAP_F_* (a client's registration: at addr if it can be,
 * registered with the driver or refused).
 */
int mdgpud_worker_mem_map(struct mdgpud_worker *w, uint64_t region,
			  uint64_t off, uint64_t size, uint64_t addr,
			  uint64_t flags)
{
	const uint64_t known = MDGPUD_CUDA_MAP_F_CLIENT |
			       MDGPUD_CUDA_MAP_F_READ_ONLY;
	bool client = flags & MDGPUD_CUDA_MAP_F_CLIENT;
	bool ro = flags & MDGPUD_CUDA_MAP_F_READ_ONLY;
	unsigned int reg = MDGPUD_CU_MEMHOSTREGISTER_PORTABLE |
			   MDGPUD_CU_MEMHOSTREGISTER_DEVICEMAP;
	uint32_t tag;
	int fd;
	void *p;

	fd = mdgpud_worker_mem_recv_fd(w, &tag);
	if (fd < 0)
		return fd;
	if (tag != (uint32_t)region || region == 0 ||
	    region > MDGPUD_WORKER_REGION_MAX || size == 0 ||
	    (flags & ~known) || (ro && !client)) {
		close(fd);
		return -EINVAL;
	}
	if (region >= w->nr_regions &&
	    mdgpud_worker_mem_regions_grow(w, region)) {
		close(fd);
		return -ENOMEM;
	}
	if (w->regions[region].ptr) {
		close(fd);
		return -EEXIST;
	}
	if (client)
		p = mdgpud_worker_mem_map_client(fd, off, size, addr,
						 ro ? PROT_READ :
						      PROT_READ | PROT_WRITE);
	else
		p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
			 (off_t)off);
	close(fd);
	if (p == MAP_FAILED)
		return -errno;
	if (client) {
		mdgpud_cu_result res;

		if (ro)
			reg |= MDGPUD_CU_MEMHOSTREGISTER_READ_ONLY;
		res = w->cu.mem_host_register(p, size, reg);
		if (res) {
			munmap(p, size);
			return mdgpud_worker_err(w, res, "cuMemHostRegister");
		}
		w->regions[region].ptr = p;
		w->regions[region].size = size;
		w->regions[region].registered = 1;
		return 0;
	}
	madvise(p, size, MADV_HUGEPAGE);	/* advisory, as in host_alloc */
	w->regions[region].ptr = p;
	w->regions[region].size = size;
	/*
	 * Pin it so copies run at DMA speed straight from the shared pages,
	 * mapped into the context's address space so that kernels may reach
	 * it (QUERY APERTURE_DEVPTR).  If pinning fails (memlock limit),
	 * copies still work, pageable, and kernels cannot reach it.
	 */
	w->regions[region].registered =
		!w->cu.mem_host_register(p, size,
					 MDGPUD_CU_MEMHOSTREGISTER_PORTABLE |
					 MDGPUD_CU_MEMHOSTREGISTER_DEVICEMAP);
	return 0;
}

static void mdgpud_worker_mem_unmap_one(struct mdgpud_worker *w,
					size_t region)
{
	struct mdgpud_worker_region *r = &w->regions[region];

	if (!r->ptr)
		return;
	if (r->registered)
		w->cu.mem_host_unregister(r->ptr);
	if (region != MDGPUD_CUDA_RPC_REGION_STAGING)
		munmap(r->ptr, r->size);
	memset(r, 0, sizeof(*r));
}

/* Unmaps a region the supervisor shared; not the staging area. */
int mdgpud_worker_mem_unmap(struct mdgpud_worker *w, uint64_t region)
{
	if (region == MDGPUD_CUDA_RPC_REGION_STAGING ||
	    region >= w->nr_regions)
		return -ENOENT;
	mdgpud_worker_mem_unmap_one(w, region);
	return 0;
}

void mdgpud_worker_mem_unmap_all(struct mdgpud_worker *w)
{
	for (size_t i = 0; i < w->nr_regions; i++)
		mdgpud_worker_mem_unmap_one(w, i);
}

/*
 * Bytes a cuMemAlloc of `size` really sets aside, as measured on the H100
 * (cuMemGetInfo deltas, tests/gpu/bench_cuda_backend.c): above 1 MiB whole
 * 2 MiB pages (2 MiB + 1 B took 4 MiB); up to 1 MiB the driver packs
 * allocations into shared pages (two of 1 MiB per page, sixteen of 64 KiB
 * or less in one), charged here as the next power of two, at least 512 B.
 */
static uint64_t mdgpud_worker_mem_reserved(uint64_t size)
{
	uint64_t r = MDGPUD_WORKER_SUBALLOC_MIN;

	if (size > MDGPUD_WORKER_GPU_PAGE / 2)
		return (size + MDGPUD_WORKER_GPU_PAGE - 1) &
		       ~(MDGPUD_WORKER_GPU_PAGE - 1);
	while (r < size)
		r <<= 1;
	return r;
}

/*
 * Allocates `size` bytes of device memory: its address and the bytes the
 * driver really sets aside.  The table has room before cuMemAlloc, so
 * that no allocation is ever left unrecorded (and so never scrubbed).
 */
int mdgpud_worker_mem_alloc(struct mdgpud_worker *w, uint64_t size,
			    mdgpud_cu_deviceptr *addr, uint64_t *reserved)
{
	void *base = w->allocs;
	mdgpud_cu_deviceptr p;
	mdgpud_cu_result res;

	if (size == 0)
		return -EINVAL;
	if (mdgpud_worker_array_grow(&base, &w->cap_allocs, w->nr_allocs + 1,
				     sizeof(*w->allocs),
				     MDGPUD_WORKER_ALLOCS_FIRST, SIZE_MAX))
		return -ENOMEM;
	w->allocs = base;
	res = w->cu.mem_alloc(&p, size);
	if (res)
		return mdgpud_worker_err(w, res, "cuMemAlloc");
	w->allocs[w->nr_allocs].addr = p;
	w->allocs[w->nr_allocs].size = size;
	w->nr_allocs++;
	*addr = p;
	*reserved = mdgpud_worker_mem_reserved(size);
	return 0;
}

/*
 * Forgets allocation i, scrubs it to zero once every stream's earlier work
 * is done (it may still use the memory), waits for that, frees it.  An
 * allocation that could not be scrubbed is not freed: it stays the
 * context's, out of any other tenant's reach.
 */
static int mdgpud_worker_mem_scrub_free(struct mdgpud_worker *w, size_t i)
{
	struct mdgpud_worker_alloc a = w->allocs[i];
	mdgpud_cu_result res;

	w->allocs[i] = w->allocs[--w->nr_allocs];
	res = mdgpud_worker_stream_join(w);
	if (!res)
		res = w->cu.memset_d8_async(a.addr, 0, a.size, w->stream);
	if (!res)
		res = mdgpud_worker_context_drain(w, w->stream, 0,
						  w->shm->worker_spin_ns);
	if (res)
		return mdgpud_worker_err(w, res, "scrub");
	return mdgpud_worker_err(w, w->cu.mem_free(a.addr), "cuMemFree");
}

int mdgpud_worker_mem_free(struct mdgpud_worker *w, mdgpud_cu_deviceptr addr)
{
	for (size_t i = 0; i < w->nr_allocs; i++)
		if (w->allocs[i].addr == addr)
			return mdgpud_worker_mem_scrub_free(w, i);
	return -ENOENT;
}

void mdgpud_worker_mem_free_all(struct mdgpud_worker *w)
{
	while (w->nr_allocs)
		mdgpud_worker_mem_scrub_free(w, w->nr_allocs - 1);
}
