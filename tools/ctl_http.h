/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * mdgpuctl serve-metrics: a small HTTP/1.0 server answering GET /metrics
 * with the daemon's metrics (Documentation/mdgpuctl.md, "serve-metrics").
 * It runs in mdgpuctl's own process, never in the daemon.
 *
 * Bounds against hostile clients: at most CTL_HTTP_CONNS connections at
 * once (more wait in the listen backlog), a request line and headers of
 * at most CTL_HTTP_REQ_MAX bytes (else 431), CTL_HTTP_DEADLINE_MS from
 * accept to the last byte of the answer (else the connection is closed),
 * one request per connection (Connection: close), bodies ignored.
 */
#ifndef MDGPUCTL_HTTP_H
#define MDGPUCTL_HTTP_H

#include <stdbool.h>
#include <stddef.h>

#define CTL_HTTP_REQ_MAX	8192
#define CTL_HTTP_CONNS		8
#define CTL_HTTP_DEADLINE_MS	10000
#define CTL_HTTP_DEFAULT_LISTEN	"127.0.0.1:9400"

/*
 * Look at the first len bytes a client sent (max: the buffer's size).
 * Returns 0 while the request line and headers are incomplete, else the
 * status to answer: 200 (GET or HEAD of /metrics, *head set for HEAD),
 * 400 malformed, 404 another path, 405 another method, 431 no end of the
 * headers within max bytes, 505 an HTTP version other than 1.x.
 */
int ctl_http_parse(const char *buf, size_t len, size_t max, bool *head);

/*
 * The whole response of status with body (not sent for HEAD) in a
 * malloc'ed *out; 0 or -ENOMEM.
 */
int ctl_http_response(int status, const char *ctype, const char *body,
		      size_t blen, bool head, char **out, size_t *outlen);

/* A listening TCP socket on "ADDR:PORT" ("[ADDR]:PORT" for IPv6),
 * numeric only; -2 a malformed address, -1 cannot listen there (the
 * reason on stderr). */
int ctl_http_listen(const char *addrport);

/* Produce the metrics body: 0 and a malloc'ed *body, else nonzero and
 * *body a malloc'ed message (or NULL) for a 503 answer. */
typedef int (*ctl_http_body_fn)(void *arg, char **body, size_t *len);

/* Serve listen_fd forever; returns only on a fatal poll error (-errno). */
int ctl_http_serve(int listen_fd, ctl_http_body_fn fn, void *arg);

#endif /* MDGPUCTL_HTTP_H */
