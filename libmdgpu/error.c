// SPDX-License-Identifier: GPL-2.0 OR MIT
/* Error texts for the negative errno values of the mdgpu ABI. */
#include <errno.h>
#include <string.h>

#include "mdgpu/mdgpu.h"

const char *mdgpu_strerror(int err)
{
	switch (err) {
	case 0: return "success";
	case -EINVAL: return "malformed command or argument";
	case -ERANGE: return "offset or length outside its buffer";
	case -ENOENT: return "handle or device address not owned by this vGPU";
	case -ENOMEM: return "device memory quota exhausted";
	case -EFAULT: return "host address not mapped";
	case -E2BIG: return "length above an ABI limit";
	case -EOPNOTSUPP: return "not supported by this backend or transport";
	case -EIO: return "the GPU reported an error";
	case -ECANCELED: return "the vGPU was reset before the command ran";
	case -ENODEV: return "the daemon or backend is gone";
	case -ENOSPC: return "handle table full";
	case -ETIMEDOUT: return "timed out";
	case -ECONNREFUSED: return "daemon not listening";
	case -EACCES: return "permission denied";
	case -EPROTO: return "protocol error talking to the daemon";
	case -EBUSY: return "no instance of this vGPU type available";
	default: return err < 0 ? strerror(-err) : "unknown error";
	}
}
