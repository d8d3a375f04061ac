// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * mdgpuctl serve-metrics (ctl_http.h): one poll() loop over the listening
 * socket and at most CTL_HTTP_CONNS non-blocking connections.  A
 * connection reads its request into a fixed buffer, gets its whole answer
 * built at once (for /metrics by asking the daemon, which is local and
 * bounded by mdgpuctl's -t), writes it as the socket takes it and is
 * closed; a deadline from accept bounds all of that.
 */
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "ctl_http.h"

struct ctl_http_conn {
	int fd;			/* -1: slot free */
	uint64_t deadline_ms;
	char in[CTL_HTTP_REQ_MAX];
	size_t in_len;
	char *out;		/* the answer, once the request is complete */
	size_t out_len, out_off;
};

static uint64_t ctl_http_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Bytes of a request line's word: visible ASCII only. */
static bool ctl_http_visible(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] <= 0x20 || (unsigned char)s[i] >= 0x7f)
			return false;
	return n > 0;
}

/* Header bytes: no control characters but tab, CR and LF. */
static bool ctl_http_header_bytes(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];

		if ((ch < 0x20 && ch != '\t' && ch != '\r' && ch != '\n') ||
		    ch == 0x7f)
			return false;
	}
	return true;
}

/* The end of the headers (after the blank line), or NULL. */
static const char *ctl_http_headers_end(const char *buf, size_t len)
{
	for (size_t i = 0; i + 1 < len; i++) {
		if (buf[i] != '\n')
			continue;
		if (buf[i + 1] == '\n')
			return buf + i + 2;
		if (i + 2 < len && buf[i + 1] == '\r' && buf[i + 2] == '\n')
			return buf + i + 3;
	}
	return NULL;
}

int ctl_http_parse(const char *buf, size_t len, size_t max, bool *head)
{
	const char *end = ctl_http_headers_end(buf, len), *nl, *sp1, *sp2;
	const char *target, *version, *q;
	size_t llen, mlen, tlen, vlen, plen;

	*head = false;
	if (!end)
		return len >= max ? 431 : 0;
	if (!ctl_http_header_bytes(buf, (size_t)(end - buf)))
		return 400;
	nl = memchr(buf, '\n', (size_t)(end - buf));
	llen = (size_t)(nl - buf);
	if (llen && buf[llen - 1] == '\r')
		llen--;
	/* METHOD SP TARGET SP VERSION, single spaces */
	sp1 = memchr(buf, ' ', llen);
	if (!sp1)
		return 400;
	mlen = (size_t)(sp1 - buf);
	target = sp1 + 1;
	sp2 = memchr(target, ' ', llen - mlen - 1);
	if (!sp2)
		return 400;
	tlen = (size_t)(sp2 - target);
	version = sp2 + 1;
	vlen = llen - mlen - tlen - 2;
	if (!ctl_http_visible(buf, mlen) || !ctl_http_visible(target, tlen) ||
	    !ctl_http_visible(version, vlen))
		return 400;
	if (vlen < 5 || memcmp(version, "HTTP/", 5))
		return 400;
	if (vlen != 8 || memcmp(version, "HTTP/1.", 7) || version[7] < '0' ||
	    version[7] > '9')
		return 505;
	if (target[0] != '/')
		return 400;
	if (mlen == 4 && !memcmp(buf, "HEAD", 4))
		*head = true;
	else if (mlen != 3 || memcmp(buf, "GET", 3))
		return 405;
	q = memchr(target, '?', tlen);
	plen = q ? (size_t)(q - target) : tlen;
	if (plen != 8 || memcmp(target, "/metrics", 8))
		return 404;
	return 200;
}

static const char *ctl_http_reason(int status)
{
	switch (status) {
	case 200: return "OK";
	case 400: return "Bad Request";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 408: return "Request Timeout";
	case 431: return "Request Header Fields Too Large";
	case 503: return "Service Unavailable";
	case 505: return "HTTP Version Not Supported";
	}
	return "Internal Server Error";
}

int ctl_http_response(int status, const char *ctype, const char *body,
		      size_t blen, bool head, char **out, size_t *outlen)
{
	char hdr[256];
	int h;

	h = snprintf(hdr, sizeof(hdr),
		     "HTTP/1.0 %d %s\r\nContent-Type: %s\r\n"
		     "Content-Length: %zu\r\n%sConnection: close\r\n\r\n",
		     status, ctl_http_reason(status), ctype, blen,
		     status == 405 ? "Allow: GET, HEAD\r\n" : "");
	if (h < 0 || (size_t)h >= sizeof(hdr))
		return -ENOMEM;
	if (head)
		blen = 0;
	*out = malloc((size_t)h + blen);
	if (!*out)
		return -ENOMEM;
	memcpy(*out, hdr, (size_t)h);
	if (blen)
		memcpy(*out + h, body, blen);
	*outlen = (size_t)h + blen;
	return 0;
}

int ctl_http_listen(const char *addrport)
{
	struct addrinfo hints = {
		.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
		.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE,
	};
	char host[64];
	const char *port, *h = addrport;
	struct addrinfo *ai;
	size_t hlen;
	long pnum;
	char *end;
	int fd, one = 1, ret;

	if (*h == '[') {		/* [IPv6]:PORT */
		const char *rb = strchr(h, ']');

		if (!rb || rb[1] != ':')
			goto bad;
		h++;
		hlen = (size_t)(rb - h);
		port = rb + 2;
	} else {
		port = strrchr(h, ':');
		if (!port)
			goto bad;
		hlen = (size_t)(port - h);
		port++;
	}
	if (!hlen || hlen >= sizeof(host) || !*port || *port == '0' ||
	    strspn(port, "0123456789") != strlen(port) || strlen(port) > 5)
		goto bad;
	pnum = strtol(port, &end, 10);
	if (pnum < 1 || pnum > 65535)
		goto bad;
	memcpy(host, h, hlen);
	host[hlen] = '\0';
	ret = getaddrinfo(host, port, &hints, &ai);
	if (ret) {
		fprintf(stderr, "mdgpuctl: --listen %s: %s\n", addrport,
			gai_strerror(ret));
		return -2;
	}
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
		    0);
	if (fd < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, ai->ai_addr, ai->ai_addrlen) ||
	    listen(fd, CTL_HTTP_CONNS * 2)) {
		fprintf(stderr, "mdgpuctl: --listen %s: %s\n", addrport,
			strerror(errno));
		if (fd >= 0)
			close(fd);
		freeaddrinfo(ai);
		return -1;
	}
	freeaddrinfo(ai);
	return fd;
bad:
	fprintf(stderr, "mdgpuctl: --listen wants ADDR:PORT or [ADDR]:PORT, numeric, port 1..65535: '%s'\n",
		addrport);
	return -2;
}

static void ctl_http_close(struct ctl_http_conn *cn)
{
	close(cn->fd);
	free(cn->out);
	cn->fd = -1;
	cn->out = NULL;
	cn->in_len = cn->out_len = cn->out_off = 0;
}

/* Build the answer of a complete request (or of an error status). */
static int ctl_http_answer(struct ctl_http_conn *cn, int status, bool head,
			   ctl_http_body_fn fn, void *arg)
{
	static const char plain[] = "text/plain; charset=utf-8";
	char *body = NULL, msg[64];
	size_t blen = 0;
	int ret;

	if (status == 200) {
		if (fn(arg, &body, &blen)) {
			status = 503;
			if (!body)
				body = strdup("cannot read mdgpud's metrics\n");
			blen = body ? strlen(body) : 0;
		}
	}
	if (status != 200 && !body) {
		snprintf(msg, sizeof(msg), "%d %s\n", status,
			 ctl_http_reason(status));
		ret = ctl_http_response(status, plain, msg, strlen(msg), head,
					&cn->out, &cn->out_len);
	} else {
		ret = ctl_http_response(status, status == 200 ?
					"text/plain; version=0.0.4; charset=utf-8" :
					plain, body, blen, head, &cn->out,
					&cn->out_len);
	}
	free(body);
	return ret;
}

/* Progress on a readable/writable connection; false: close it. */
static bool ctl_http_step(struct ctl_http_conn *cn, ctl_http_body_fn fn,
			  void *arg)
{
	if (!cn->out) {
		ssize_t r = recv(cn->fd, cn->in + cn->in_len,
				 sizeof(cn->in) - cn->in_len, MSG_DONTWAIT);
		bool head;
		int status;

		if (r == 0)
			return false;	/* gave up before a whole request */
		if (r < 0)
			return errno == EAGAIN || errno == EINTR;
		cn->in_len += (size_t)r;
		status = ctl_http_parse(cn->in, cn->in_len, sizeof(cn->in),
					&head);
		if (!status)
			return true;
		if (ctl_http_answer(cn, status, head, fn, arg))
			return false;
	}
	while (cn->out_off < cn->out_len) {
		ssize_t w = send(cn->fd, cn->out + cn->out_off,
				 cn->out_len - cn->out_off,
				 MSG_DONTWAIT | MSG_NOSIGNAL);

		if (w < 0)
			return errno == EAGAIN || errno == EINTR;
		cn->out_off += (size_t)w;
	}
	return false;			/* all written: done */
}

static void ctl_http_accept(int lfd, struct ctl_http_conn *conns)
{
	for (int i = 0; i < CTL_HTTP_CONNS; i++) {
		int fd;

		if (conns[i].fd >= 0)
			continue;
		fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno != EAGAIN && errno != EINTR &&
			    errno != ECONNABORTED)
				fprintf(stderr, "mdgpuctl: accept: %s\n",
					strerror(errno));
			return;
		}
		conns[i].fd = fd;
		conns[i].deadline_ms = ctl_http_now_ms() + CTL_HTTP_DEADLINE_MS;
	}
}

int ctl_http_serve(int lfd, ctl_http_body_fn fn, void *arg)
{
	static struct ctl_http_conn conns[CTL_HTTP_CONNS];
	struct pollfd pfd[CTL_HTTP_CONNS + 1];
	int slot[CTL_HTTP_CONNS + 1];

	for (int i = 0; i < CTL_HTTP_CONNS; i++)
		conns[i].fd = -1;
	for (;;) {
		uint64_t now = ctl_http_now_ms(), next = now + 60000;
		int n = 0, free_slots = 0, r;

		for (int i = 0; i < CTL_HTTP_CONNS; i++) {
			struct ctl_http_conn *cn = &conns[i];

			if (cn->fd < 0) {
				free_slots++;
				continue;
			}
			if (now >= cn->deadline_ms) {
				ctl_http_close(cn);
				free_slots++;
				continue;
			}
			if (cn->deadline_ms < next)
				next = cn->deadline_ms;
			pfd[n] = (struct pollfd){
				.fd = cn->fd,
				.events = cn->out ? POLLOUT : POLLIN,
			};
			slot[n++] = i;
		}
		/* Full: new clients wait in the backlog until a slot frees
		 * (by an answer or a deadline). */
		if (free_slots) {
			pfd[n] = (struct pollfd){ .fd = lfd, .events = POLLIN };
			slot[n++] = -1;
		}
		r = poll(pfd, (nfds_t)n, (int)(next - now));
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		for (int k = 0; k < n; k++) {
			if (!pfd[k].revents)
				continue;
			if (slot[k] < 0) {
				ctl_http_accept(lfd, conns);
				continue;
			}
			if (!ctl_http_step(&conns[slot[k]], fn, arg))
				ctl_http_close(&conns[slot[k]]);
		}
	}
}
