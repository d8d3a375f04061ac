// SPDX-License-Identifier: GPL-2.0 OR MIT
/* CUresult to errno for requests, and the message to the supervisor. */
#include "worker.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

void mdgpud_worker_err_msg(struct mdgpud_worker *w, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(w->shm->msg, sizeof(w->shm->msg), fmt, ap);
	va_end(ap);
}

/* Sticky errors make the context unusable: tell the supervisor, exit. */
static void mdgpud_worker_err_lost(struct mdgpud_worker *w,
				   mdgpud_cu_result res, const char *what)
{
	const char *name = NULL;

	if (w->cu.get_error_name)
		w->cu.get_error_name(res, &name);
	mdgpud_worker_err_msg(w, "%s: %s (%u): context lost", what,
			      name ? name : "?", res);
	w->shm->lost_result = res;	/* before the state (seq_cst store) */
	atomic_store(&w->shm->state, MDGPUD_CUDA_WORKER_LOST);
}

/* Maps a CUresult, noting a sticky error.  Returns a negative errno. */
int mdgpud_worker_err(struct mdgpud_worker *w, mdgpud_cu_result res,
		      const char *what)
{
	const char *name = NULL;

	if (res == MDGPUD_CUDA_SUCCESS)
		return 0;
	w->last_cu = res;
	if (mdgpud_cuda_error_is_sticky(res)) {
		mdgpud_worker_err_lost(w, res, what);
		return -EIO;
	}
	w->cu.get_error_name(res, &name);
	mdgpud_worker_err_msg(w, "%s: %s (%u)", what, name ? name : "?", res);
	return mdgpud_cuda_errno(res);
}
