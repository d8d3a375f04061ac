/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * How mdgpud names the GPU it serves (config cuda_device): a CUDA
 * ordinal, a PCI bus id or a GPU UUID.  Shared by the configuration
 * (userspace-daemon/core/config.c checks a value and keeps it in
 * canonical form), the cuda backend's supervisor and mdgpud-worker, which
 * finds the GPU a canonical selector names (user space, not ABI: nothing
 * under include/uapi includes it).
 *
 * Canonical forms, one per kind, told apart by their first characters:
 *   ordinal   decimal, no leading zero: "0" .. "255"
 *   PCI       the kernel's "%04x:%02x:%02x.%x" (lowercase hex), as
 *             cuDeviceGetByPCIBusId takes it
 *   UUID      "GPU-" and 8-4-4-4-12 lowercase hex digits, as nvidia-smi -L
 *             prints a GPU's UUID
 */
#ifndef MDGPU_COMMON_GPU_SELECT_H
#define MDGPU_COMMON_GPU_SELECT_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The highest CUDA ordinal a selector may name. */
#define MDGPU_GPU_ORDINAL_MAX		255
#define MDGPU_GPU_UUID_PREFIX		"GPU-"
/* A UUID without the prefix, 8-4-4-4-12 hex digits, NUL included. */
#define MDGPU_UUID_STR_LEN		37
/* "GPU-" and a UUID, NUL included. */
#define MDGPU_GPU_UUID_STR_LEN		(4 + MDGPU_UUID_STR_LEN)
/* Room for any canonical selector, NUL included (the UUID is longest). */
#define MDGPU_GPU_SELECT_LEN		MDGPU_GPU_UUID_STR_LEN

enum mdgpu_gpu_select_kind {
	MDGPU_GPU_SELECT_ORDINAL,
	MDGPU_GPU_SELECT_PCI,
	MDGPU_GPU_SELECT_UUID,
};

/*
 * s as an ordinal into *out: 1 to 3 decimal digits without a leading zero
 * (a leading zero read as octal once meant another GPU), at most
 * MDGPU_GPU_ORDINAL_MAX; 0, or -EINVAL.
 */
static inline int mdgpu_gpu_select_ordinal(const char *s, int *out)
{
	int v = 0, n = 0;

	for (; s[n] >= '0' && s[n] <= '9'; n++) {
		if (n == 3 || (n == 1 && v == 0))
			return -EINVAL;
		v = v * 10 + (s[n] - '0');
	}
	if (!n || s[n] || v > MDGPU_GPU_ORDINAL_MAX)
		return -EINVAL;
	*out = v;
	return 0;
}

/* The kind of a canonical selector. */
static inline enum mdgpu_gpu_select_kind
mdgpu_gpu_select_kind(const char *canonical)
{
	if (!strncmp(canonical, MDGPU_GPU_UUID_PREFIX,
		     sizeof(MDGPU_GPU_UUID_PREFIX) - 1))
		return MDGPU_GPU_SELECT_UUID;
	return strchr(canonical, ':') ? MDGPU_GPU_SELECT_PCI :
					MDGPU_GPU_SELECT_ORDINAL;
}

/* The 16 bytes of a UUID as 8-4-4-4-12 lowercase hex digits. */
static inline char *mdgpu_uuid_format(const uint8_t u[16],
				      char out[MDGPU_UUID_STR_LEN])
{
	static const char hex[] = "0123456789abcdef";
	char *p = out;

	for (int i = 0; i < 16; i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			*p++ = '-';
		*p++ = hex[u[i] >> 4];
		*p++ = hex[u[i] & 15];
	}
	*p = '\0';
	return out;
}

/* A GPU's UUID as nvidia-smi prints it: "GPU-" and the UUID. */
static inline char *mdgpu_gpu_uuid_format(const uint8_t u[16],
					  char out[MDGPU_GPU_UUID_STR_LEN])
{
	memcpy(out, MDGPU_GPU_UUID_PREFIX, sizeof(MDGPU_GPU_UUID_PREFIX) - 1);
	mdgpu_uuid_format(u, out + sizeof(MDGPU_GPU_UUID_PREFIX) - 1);
	return out;
}

static inline int mdgpu_hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/*
 * A GPU UUID, "GPU-" (any case) and 8-4-4-4-12 hex digits (any case), and
 * nothing after: its 16 bytes into u, 0; or -EINVAL.  Reads at most up to
 * the first byte that does not fit, so s may be of any length.
 */
static inline int mdgpu_gpu_uuid_parse(const char *s, uint8_t u[16])
{
	int b = 0;

	/* | 0x20 folds only letters onto "gpu"; the dash is exact. */
	if ((s[0] | 0x20) != 'g' || (s[1] | 0x20) != 'p' ||
	    (s[2] | 0x20) != 'u' || s[3] != '-')
		return -EINVAL;
	s += sizeof(MDGPU_GPU_UUID_PREFIX) - 1;
	for (int i = 0; i < MDGPU_UUID_STR_LEN - 1; i++) {
		int hi, lo;

		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (s[i] != '-')
				return -EINVAL;
			continue;
		}
		hi = mdgpu_hex_digit(s[i]);
		lo = hi < 0 ? -1 : mdgpu_hex_digit(s[++i]);
		if (lo < 0)
			return -EINVAL;
		u[b++] = (uint8_t)(hi << 4 | lo);
	}
	return s[MDGPU_UUID_STR_LEN - 1] ? -EINVAL : 0;
}

#endif /* MDGPU_COMMON_GPU_SELECT_H */
