/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * MD2 (RFC 1319) and HMAC-MD2 (RFC 2104 with MD2's 16-byte block): the
 * keyed hash NVIDIA's runtime uses for its integrity check of the driver
 * (Documentation/export-tables.md).  Not for anything that needs a secure
 * hash.
 */
#ifndef MDGPU_CU_MD2_H
#define MDGPU_CU_MD2_H

#include <stddef.h>
#include <stdint.h>

struct mdgpu_md2 {
	uint8_t x[48];		/* state, then the block, then their xor */
	uint8_t sum[16];	/* running checksum */
	uint8_t buf[16];	/* bytes of an unfinished block */
	unsigned n;		/* how many of buf are filled */
};

void mdgpu_md2_init(struct mdgpu_md2 *h);
void mdgpu_md2_update(struct mdgpu_md2 *h, const void *data, size_t len);
void mdgpu_md2_final(struct mdgpu_md2 *h, uint8_t out[16]);

/* HMAC-MD2 of msg under a 16-byte key (one MD2 block: no key hashing). */
void mdgpu_hmac_md2(const uint8_t key[16], const void *msg, size_t len,
		    uint8_t out[16]);

#endif /* MDGPU_CU_MD2_H */
