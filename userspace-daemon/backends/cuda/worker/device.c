// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The GPU a selector names (config cuda_device, common/gpu_select.h's
 * canonical forms), as the CUDA ordinal the driver numbers it with: an
 * ordinal as it is, a PCI bus id through cuDeviceGetByPCIBusId, a GPU
 * UUID by comparing it with every device's cuDeviceGetUuid.  The probe
 * worker finds the GPU once; the supervisor gives every later worker the
 * ordinal it found (Documentation/cuda-backend.md, "Finding the GPU").
 */
#include "worker.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/gpu_select.h"

/* Device i's bus id and UUID ("?" where the driver gives none). */
static void mdgpud_worker_device_ids(struct mdgpud_worker *w, int i,
				     char bus_id[32],
				     char uuid[MDGPU_GPU_UUID_STR_LEN])
{
	uint8_t u[16];
	mdgpud_cu_device dev;

	strcpy(bus_id, "?");
	strcpy(uuid, "?");
	if (w->cu.device_get(&dev, i))
		return;
	if (w->cu.device_get_pci_bus_id(bus_id, 32, dev))
		strcpy(bus_id, "?");
	if (!w->cu.device_get_uuid((struct CUuuid_st *)(void *)u, dev))
		mdgpu_gpu_uuid_format(u, uuid);
}

/*
 * No device matches `device`: the message to the supervisor names the
 * selector and each device CUDA sees (ordinal, bus id, UUID), as many as
 * the message holds.  Returns -ENODEV.
 */
static int mdgpud_worker_device_none(struct mdgpud_worker *w,
				     const char *device, int count)
{
	char *msg = w->shm->msg, bus_id[32], uuid[MDGPU_GPU_UUID_STR_LEN];
	size_t len = sizeof(w->shm->msg), n;

	n = (size_t)snprintf(msg, len, "no CUDA device %s: CUDA sees %d%s",
			     device, count, count ? ":" : "");
	for (int i = 0; i < count && n < len; i++) {
		mdgpud_worker_device_ids(w, i, bus_id, uuid);
		n += (size_t)snprintf(msg + n, len - n, "%s %d %s %s",
				      i ? "," : "", i, bus_id, uuid);
	}
	return -ENODEV;
}

/* The ordinal of the device whose CUdevice is dev, or -1. */
static int mdgpud_worker_device_ordinal(struct mdgpud_worker *w,
					mdgpud_cu_device dev, int count)
{
	mdgpud_cu_device d;

	for (int i = 0; i < count; i++)
		if (!w->cu.device_get(&d, i) && d == dev)
			return i;
	return -1;
}

/* The ordinal of the device whose UUID is uuid (canonical), or -1. */
static int mdgpud_worker_device_by_uuid(struct mdgpud_worker *w,
					const char *uuid, int count)
{
	char bus_id[32], u[MDGPU_GPU_UUID_STR_LEN];

	for (int i = 0; i < count; i++) {
		mdgpud_worker_device_ids(w, i, bus_id, u);
		if (!strcmp(u, uuid))
			return i;
	}
	return -1;
}

int mdgpud_worker_device_find(struct mdgpud_worker *w, const char *device,
			      int *ordinal)
{
	mdgpud_cu_result res;
	mdgpud_cu_device dev;
	int count = 0, i = -1;

	res = w->cu.device_get_count(&count);
	if (res)
		return mdgpud_worker_err(w, res, "cuDeviceGetCount");
	switch (mdgpu_gpu_select_kind(device)) {
	case MDGPU_GPU_SELECT_ORDINAL:
		if (mdgpu_gpu_select_ordinal(device, &i) || i >= count)
			i = -1;
		break;
	case MDGPU_GPU_SELECT_PCI:
		/* The CUdevice it answers is not documented to be the
		 * ordinal: the ordinal is the one cuDeviceGet maps to it. */
		if (!w->cu.device_get_by_pci_bus_id(&dev, device))
			i = mdgpud_worker_device_ordinal(w, dev, count);
		break;
	case MDGPU_GPU_SELECT_UUID:
		i = mdgpud_worker_device_by_uuid(w, device, count);
		break;
	}
	if (i < 0)
		return mdgpud_worker_device_none(w, device, count);
	*ordinal = i;
	return 0;
}
