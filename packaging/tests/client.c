// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * client.c SOCKET: built by check-packaging.sh against the installed
 * <mdgpu/mdgpu.h>, libmdgpu.a and libmdgpu.pc.  Opens a vGPU at SOCKET,
 * fills 1 MiB of device memory, reads it back and compares.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mdgpu/mdgpu.h>

#define CLIENT_BYTES	(1u << 20)

int main(int argc, char **argv)
{
	struct mdgpu_open_opts o = { .type = "1g" };
	struct mdgpu_info info;
	struct mdgpu *g;
	mdgpu_devptr p;
	uint8_t *buf;
	int ret;

	if (argc != 2)
		return 2;
	o.path = argv[1];
	ret = mdgpu_open(&o, &g);
	if (ret) {
		printf("mdgpu_open: %s (%s)\n", mdgpu_strerror(ret),
		       mdgpu_last_error(NULL));
		return 1;
	}
	buf = malloc(CLIENT_BYTES);
	ret = buf ? mdgpu_get_info(g, &info) : -1;
	if (!ret)
		ret = mdgpu_mem_alloc(g, CLIENT_BYTES, &p);
	if (!ret)
		ret = mdgpu_memset(g, p, 0xa5, CLIENT_BYTES);
	if (!ret)
		ret = mdgpu_copy_dtoh(g, buf, p, CLIENT_BYTES);
	for (uint32_t i = 0; !ret && i < CLIENT_BYTES; i++)
		if (buf[i] != 0xa5)
			ret = -1;
	if (ret) {
		printf("failed: %d (%s)\n", ret, mdgpu_last_error(g));
	} else {
		printf("vgpu %u: 1 MiB set and read back\n", info.vgpu_id);
		mdgpu_mem_free(g, p);
	}
	free(buf);
	mdgpu_close(g);
	return ret ? 1 : 0;
}
