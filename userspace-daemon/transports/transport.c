// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Transport registry: the table of transports the daemon can serve vGPUs
 * through, looked up by the name the config's `transport` key gives.
 */
#include <stddef.h>
#include <string.h>

#include "mdgpud/transport.h"

static const struct mdgpud_transport_ops *const mdgpud_transports[] = {
	&mdgpud_transport_socket,
	&mdgpud_transport_kernel,
};

const struct mdgpud_transport_ops *mdgpud_transport_find(const char *name)
{
	size_t i;

	if (!name)
		return NULL;
	for (i = 0; i < sizeof(mdgpud_transports) /
		    sizeof(mdgpud_transports[0]); i++)
		if (!strcmp(name, mdgpud_transports[i]->name))
			return mdgpud_transports[i];
	return NULL;
}
