// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The fake libcuda's devices: how many, their CUdevice handles, names,
 * PCI bus ids, UUIDs and attributes (the table in modules.c).
 *
 * One device, bus id "fake0", unless MDGPUD_FAKE_CUDA_DEVICES lists PCI
 * bus ids separated by ',' (at most FAKE_DEVICES_MAX, each shorter than
 * FAKE_BUS_ID_LEN): the device of ordinal i then has the i-th, and the
 * UUID GPU-facecda0-0000-4000-8000-0000000000<i, two hex digits>, so that
 * tests can pick a device by ordinal, bus id or UUID.  A device's CUdevice
 * is FAKE_CUDEVICE_BASE + its ordinal, not the ordinal: the driver does
 * not promise that they are equal.  Every device shares the one context
 * and memory of libcuda.c.  Read from the worker's environment.
 */
#include "fake.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <mdgpud/cuda_values.h>

#define FAKE_DEVICES_MAX	8
#define FAKE_BUS_ID_LEN		32
#define FAKE_CUDEVICE_BASE	0x100

struct CUuuid_st { unsigned char bytes[16]; };

/* The devices' bus ids into bus; their count. */
static int fake_devices(char bus[FAKE_DEVICES_MAX][FAKE_BUS_ID_LEN])
{
	const char *s = getenv("MDGPUD_FAKE_CUDA_DEVICES");
	int n = 0;

	if (!s || !*s) {
		strcpy(bus[0], "fake0");
		return 1;
	}
	while (*s && n < FAKE_DEVICES_MAX) {
		size_t len = strcspn(s, ",");

		if (len >= FAKE_BUS_ID_LEN)
			len = FAKE_BUS_ID_LEN - 1;
		memcpy(bus[n], s, len);
		bus[n++][len] = '\0';
		s += strcspn(s, ",");
		if (*s)
			s++;
	}
	return n;
}

/* The ordinal of CUdevice d, or -1 if it is none. */
static int fake_device_ordinal(mdgpud_cu_device d)
{
	char bus[FAKE_DEVICES_MAX][FAKE_BUS_ID_LEN];
	int i = d - FAKE_CUDEVICE_BASE;

	return i >= 0 && i < fake_devices(bus) ? i : -1;
}

FAKE_EXPORT mdgpud_cu_result cuDeviceGetCount(int *n)
{
	char bus[FAKE_DEVICES_MAX][FAKE_BUS_ID_LEN];

	*n = fake_devices(bus);
	return 0;
}

FAKE_EXPORT mdgpud_cu_result cuDeviceGet(mdgpud_cu_device *d, int ordinal)
{
	char bus[FAKE_DEVICES_MAX][FAKE_BUS_ID_LEN];

	if (ordinal < 0 || ordinal >= fake_devices(bus))
		return MDGPUD_CUDA_ERROR_INVALID_DEVICE;
	*d = FAKE_CUDEVICE_BASE + ordinal;
	return 0;
}

FAKE_EXPORT mdgpud_cu_result cuDeviceGetName(char *name, int len,
					     mdgpud_cu_device d)
{
	if (fake_device_ordinal(d) < 0)
		return MDGPUD_CUDA_ERROR_INVALID_DEVICE;
	snprintf(name, (size_t)len, "mdgpu fake CUDA device");
	return 0;
}

/*
 * MPS_ENABLED as a client process sees it: 1 where the environment names
 * an MPS pipe directory whose control socket exists (the fake has no
 * server; the daemon's tests start a fake control daemon that makes
 * one), else 0.
 */
static int fake_mps_enabled(void)
{
	const char *dir = getenv("CUDA_MPS_PIPE_DIRECTORY");
	char path[4096];

	return dir && *dir &&
	       snprintf(path, sizeof(path), "%s/control", dir) <
	       (int)sizeof(path) && !access(path, F_OK);
}

FAKE_EXPORT mdgpud_cu_result cuDeviceGetAttribute(int *v,
						  mdgpud_cu_device_attribute a,
						  mdgpud_cu_device d)
{
	if (fake_device_ordinal(d) < 0)
		return MDGPUD_CUDA_ERROR_INVALID_DEVICE;
	if (a == MDGPUD_CU_DEV_ATTR_MPS_ENABLED) {
		*v = fake_mps_enabled();
		return 0;
	}
	return fake_device_attr(a, v) ? MDGPUD_CUDA_ERROR_INVALID_VALUE : 0;
}

FAKE_EXPORT mdgpud_cu_result cuDeviceGetPCIBusId(char *id, int len,
						 mdgpud_cu_device d)
{
	char bus[FAKE_DEVICES_MAX][FAKE_BUS_ID_LEN];
	int i = fake_device_ordinal(d);

	if (i < 0 || len <= 0)
		return i < 0 ? MDGPUD_CUDA_ERROR_INVALID_DEVICE :
			       MDGPUD_CUDA_ERROR_INVALID_VALUE;
	fake_devices(bus);
	snprintf(id, (size_t)len, "%s", bus[i]);
	return 0;
}

/* The driver takes any case of the hex digits. */
FAKE_EXPORT mdgpud_cu_result cuDeviceGetByPCIBusId(mdgpud_cu_device *d,
						   const char *id)
{
	char bus[FAKE_DEVICES_MAX][FAKE_BUS_ID_LEN];
	int n = fake_devices(bus);

	for (int i = 0; i < n; i++)
		if (!strcasecmp(bus[i], id)) {
			*d = FAKE_CUDEVICE_BASE + i;
			return 0;
		}
	return MDGPUD_CUDA_ERROR_INVALID_DEVICE;
}

FAKE_EXPORT mdgpud_cu_result cuDeviceGetUuid_v2(struct CUuuid_st *u,
						mdgpud_cu_device d)
{
	static const unsigned char uuid[16] = {
		0xfa, 0xce, 0xcd, 0xa0, 0, 0, 0x40, 0, 0x80,
	};
	int i = fake_device_ordinal(d);

	if (i < 0)
		return MDGPUD_CUDA_ERROR_INVALID_DEVICE;
	memcpy(u->bytes, uuid, sizeof(uuid));
	u->bytes[15] = (unsigned char)i;
	return 0;
}
