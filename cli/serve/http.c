/*
 * http.c - heapdump serve's HTTP side, on libmicrohttpd: the
 * listening socket (127.0.0.1 unless --bind), the token every request
 * must carry, GET and HEAD only, the security headers, the page's files
 * from the program and the API (api.c). The one file that
 * includes microhttpd.h; built without it (make MHD=0), serve says how
 * to get it.
 *
 * Hostile clients (man 1 heapdump-serve, Clients): THREADS threads
 * answer, so that a slow request (a drawing) holds up no other; a
 * connection that has not sent a whole request header is "waiting",
 * and may wait HEADER_SECS from its accept (or from the end of its last
 * answer), not a byte at a time for ever; at most WAIT_MAX connections
 * wait in all and WAIT_PER_ADDR from one client address (every
 * loopback address counts as one client, whose limit is WAIT_MAX), a
 * new one pushing out the oldest waiting one that has nothing unread,
 * so that a new connection always gets in and the slots
 * beyond WAIT_MAX are kept for requests being answered and for the
 * connections that carried the token; oversized requests get 414, 431
 * or 400 at once, and every refusal closes its connection.
 */
#include "../common.h"
#include "serve.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

int serve_addr_loopback(const char *addr)
{
	struct in_addr a4;
	struct in6_addr a6;

	if (inet_pton(AF_INET, addr, &a4) == 1)
		return (ntohl(a4.s_addr) >> 24) == 127;
	if (inet_pton(AF_INET6, addr, &a6) == 1)
		return IN6_IS_ADDR_LOOPBACK(&a6) ||
		       (IN6_IS_ADDR_V4MAPPED(&a6) && a6.s6_addr[12] == 127);
	return -1;
}

int serve_token_equal(const char *given, const char *token)
{
	unsigned char d = 0;
	size_t i;

	/* the length is no secret; the bytes are compared all */
	if (!given || strlen(given) != SERVE_TOKEN_LEN)
		return 0;
	for (i = 0; i < SERVE_TOKEN_LEN; i++)
		d |= (unsigned char)(given[i] ^ token[i]);
	return d == 0;
}

#if HAVE_MHD

#include <microhttpd.h>

#include "../dynlib.h"

#ifndef HD_MHD_SONAME
#error "HD_MHD_SONAME: the file name of libmicrohttpd to load (the Makefile's)"
#endif

/* libmicrohttpd's functions, with the types of the header compiled
 * against: the library (and the TLS libraries it needs) is loaded when
 * serve starts (dynlib.h), so that no other command maps it */
#define MHD_FN(f) __typeof__(f) *f
static struct mhd_api {
	MHD_FN(MHD_add_response_header);
	MHD_FN(MHD_create_response_from_buffer);
	MHD_FN(MHD_destroy_response);
	MHD_FN(MHD_get_connection_info);
	MHD_FN(MHD_get_connection_values);
	MHD_FN(MHD_get_daemon_info);
	MHD_FN(MHD_lookup_connection_value);
	MHD_FN(MHD_queue_response);
	MHD_FN(MHD_start_daemon);
	MHD_FN(MHD_stop_daemon);
} mhd;
#define MHD_SYM(f) { #f, offsetof(struct mhd_api, f) }
static const struct cli_dynsym mhd_syms[] = {
	MHD_SYM(MHD_add_response_header),
	MHD_SYM(MHD_create_response_from_buffer),
	MHD_SYM(MHD_destroy_response), MHD_SYM(MHD_get_connection_info),
	MHD_SYM(MHD_get_connection_values), MHD_SYM(MHD_get_daemon_info),
	MHD_SYM(MHD_lookup_connection_value), MHD_SYM(MHD_queue_response),
	MHD_SYM(MHD_start_daemon), MHD_SYM(MHD_stop_daemon),
};

int serve_http_available(void)
{
	return 1;
}

int serve_http_load(void)
{
	static int state;

	return cli_dynload(&state, HD_MHD_SONAME, "libmicrohttpd (Debian: "
			   "libmicrohttpd12)", mhd_syms,
			   sizeof(mhd_syms) / sizeof(mhd_syms[0]), &mhd);
}

#if MHD_VERSION < 0x00097002
typedef int MHD_RESULT;
#else
typedef enum MHD_Result MHD_RESULT;
#endif

/* No inline script, no style attribute from data, nothing from the
 * network: the page's scripts and styles are files of the program. */
#define CSP "default-src 'none'; script-src 'self'; style-src 'self'; " \
	    "img-src 'self' data:; connect-src 'self'; base-uri 'none'; " \
	    "form-action 'none'; frame-ancestors 'none'"

#define THREADS 4          /* answering at once */
#define CONN_MAX 256       /* connections at once */
#define PER_ADDR_MAX 128   /* connections from one address */
#define WAIT_MAX 64        /* waiting for a request header, in all */
#define WAIT_PER_ADDR 16   /* of them from one client address */
#define HEADER_SECS 5      /* to send a whole request header */
#define IDLE_SECS 30       /* libmicrohttpd's timeout: silence */
#define MEM_PER_CONN (128 * 1024) /* a connection's buffers */
#define URI_MAX 8192       /* bytes of a request's URI */
#define ARGS_MAX 64        /* query parameters */
#define HEADERS_MAX 16384  /* bytes of a request's header fields */

/* What a connection is doing. */
enum { C_FREE, C_WAIT, C_BUSY, C_TRUSTED, C_CUT };

struct conn {
	int state;
	int trusted;             /* a request carried the token */
	int fd;
	double since;            /* when its wait began */
	unsigned char addr[17];  /* family, then the address */
};

struct server {
	const struct serve_http_opts *o;
	struct serve_state *st;
	pthread_mutex_t lock;    /* conns, stop */
	pthread_cond_t wake;
	int stop;
	struct conn conns[CONN_MAX + THREADS];
};

/* A URI over URI_MAX: the request's context, from uri_seen. */
static char uri_too_long;

static const char *conn_arg(const struct serve_req *r, const char *name)
{
	return mhd.MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND,
					   name);
}

/* ---- connections ---- */

/* The client's address as a key: every loopback address is one client
 * (any local user can connect from any of 127.0.0.0/8), a v4-mapped
 * IPv6 address its IPv4 one. */
static void addr_key(const struct sockaddr *sa, unsigned char *key)
{
	const struct sockaddr_in *s4 = (const struct sockaddr_in *)sa;
	const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)sa;
	const unsigned char *b;

	memset(key, 0, 17);
	if (!sa)
		return;
	if (sa->sa_family == AF_INET) {
		b = (const unsigned char *)&s4->sin_addr;
		if (b[0] == 127)
			return;
		key[0] = 4;
		memcpy(key + 1, b, 4);
	} else if (sa->sa_family == AF_INET6) {
		b = s6->sin6_addr.s6_addr;
		if (IN6_IS_ADDR_LOOPBACK(&s6->sin6_addr) ||
		    (IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr) && b[12] == 127))
			return;
		if (IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr)) {
			key[0] = 4;
			memcpy(key + 1, b + 12, 4);
		} else {
			key[0] = 6;
			memcpy(key + 1, b, 16);
		}
	}
}

/*
 * Ends a connection: with status and why (when status is not 0) written
 * to its socket as a whole HTTP answer, then its socket shut down, which
 * libmicrohttpd's thread sees and closes. The answer is written here, not
 * by libmicrohttpd: the connection is one it will not answer (a header
 * that never ends, parameters more than its memory parses). Under
 * sv->lock, so the descriptor is still the connection's own
 * (conn_notify frees the slot, under the lock, before it is closed).
 */
static void conn_cut(struct conn *k, unsigned status, const char *why)
{
	char buf[512];
	int n;

	if (status) {
		n = snprintf(buf, sizeof(buf), "HTTP/1.1 %u %s\r\n"
			     "Content-Type: application/json; charset=utf-8\r\n"
			     "Content-Security-Policy: default-src 'none'\r\n"
			     "X-Content-Type-Options: nosniff\r\n"
			     "Cache-Control: no-store\r\n"
			     "Connection: close\r\nContent-Length: %zu\r\n\r\n"
			     "{\"error\":\"%s\"}\n", status,
			     status == 400 ? "Bad Request" :
			     status == 408 ? "Request Timeout" :
			     "Service Unavailable", strlen(why) + 12, why);
		if (n > 0 && (size_t)n < sizeof(buf))
			(void)!send(k->fd, buf, (size_t)n,
				    MSG_DONTWAIT | MSG_NOSIGNAL);
	}
	shutdown(k->fd, SHUT_RDWR);
	k->state = C_CUT;
}

/* Has the client sent bytes the server has not read yet? */
static int pending(const struct conn *k)
{
	char c;

	return recv(k->fd, &c, 1, MSG_PEEK | MSG_DONTWAIT) == 1;
}

/*
 * The waiting connection to push out (from addr, or from any address
 * when addr is NULL), and how many wait: the oldest of those with
 * nothing unread, else the oldest. A client that sends its request at
 * once has it unread on its socket until a thread reads it: however
 * fast others connect, its connection is not the one pushed out. Under
 * sv->lock.
 */
static struct conn *oldest_waiting(struct server *sv, const unsigned char *addr,
				   unsigned *n)
{
	struct conn *old = NULL, *idle = NULL, *k;
	size_t i;

	*n = 0;
	for (i = 0; i < sizeof(sv->conns) / sizeof(sv->conns[0]); i++) {
		k = &sv->conns[i];
		if (k->state != C_WAIT || (addr && memcmp(k->addr, addr, 17)))
			continue;
		(*n)++;
		if (!old || k->since < old->since)
			old = k;
	}
	if (!old || *n <= (addr ? WAIT_PER_ADDR : WAIT_MAX))
		return old;
	for (i = 0; i < sizeof(sv->conns) / sizeof(sv->conns[0]); i++) {
		k = &sv->conns[i];
		if (k->state != C_WAIT || (addr && memcmp(k->addr, addr, 17)) ||
		    (idle && k->since >= idle->since) || pending(k))
			continue;
		idle = k;
	}
	return idle ? idle : old;
}

/* A new connection pushes out a waiting one of its address, then of
 * all, past their limits: under sv->lock. */
static void make_room(struct server *sv, const unsigned char *addr)
{
	struct conn *old;
	unsigned n;

	/* loopback is one client, whose limit is the total */
	if (addr[0] && (old = oldest_waiting(sv, addr, &n)) &&
	    n > WAIT_PER_ADDR)
		conn_cut(old, 503, "too many connections wait for their "
			 "request header");
	if ((old = oldest_waiting(sv, NULL, &n)) && n > WAIT_MAX)
		conn_cut(old, 503, "too many connections wait for their "
			 "request header");
}

static void conn_notify(void *cls, struct MHD_Connection *c, void **ctx,
			enum MHD_ConnectionNotificationCode what)
{
	struct server *sv = cls;
	const union MHD_ConnectionInfo *fi, *ai;
	struct conn *k = NULL;
	size_t i;

	pthread_mutex_lock(&sv->lock);
	if (what == MHD_CONNECTION_NOTIFY_CLOSED) {
		if ((k = *ctx))
			k->state = C_FREE;
		*ctx = NULL;
		pthread_mutex_unlock(&sv->lock);
		return;
	}
	fi = mhd.MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	ai = mhd.MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	for (i = 0; fi && i < sizeof(sv->conns) / sizeof(sv->conns[0]); i++)
		if (sv->conns[i].state == C_FREE) {
			k = &sv->conns[i];
			break;
		}
	*ctx = k;
	if (!k) { /* no slot: not kept */
		if (fi)
			shutdown(fi->connect_fd, SHUT_RDWR);
		pthread_mutex_unlock(&sv->lock);
		return;
	}
	k->state = C_WAIT;
	k->trusted = 0;
	k->fd = fi->connect_fd;
	k->since = cli_now();
	addr_key(ai ? ai->client_addr : NULL, k->addr);
	make_room(sv, k->addr);
	pthread_mutex_unlock(&sv->lock);
}

static struct conn *conn_of(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci = mhd.MHD_get_connection_info(
		c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return ci ? ci->socket_context : NULL;
}

/* A connection's state, when it is kept. */
static void conn_set(struct server *sv, struct MHD_Connection *c, int state,
		     int trusted)
{
	struct conn *k = conn_of(c);

	pthread_mutex_lock(&sv->lock);
	if (k && k->state != C_CUT && k->state != C_FREE) {
		k->trusted |= trusted;
		k->state = state == C_WAIT && k->trusted ? C_TRUSTED : state;
		k->since = cli_now();
	}
	pthread_mutex_unlock(&sv->lock);
}

/* A request answered: its connection waits for the next. */
static void request_done(void *cls, struct MHD_Connection *c, void **req,
			 enum MHD_RequestTerminationCode toe)
{
	(void)req;
	(void)toe;
	conn_set(cls, c, C_WAIT, 0);
}

/* Cuts, four times a second, the connections that waited longer than
 * HEADER_SECS for their request header. */
static void *watch(void *arg)
{
	struct server *sv = arg;
	struct timespec ts;
	double now;
	size_t i;

	pthread_mutex_lock(&sv->lock);
	while (!sv->stop) {
		now = cli_now();
		for (i = 0; i < sizeof(sv->conns) / sizeof(sv->conns[0]); i++)
			if (sv->conns[i].state == C_WAIT &&
			    now - sv->conns[i].since > HEADER_SECS)
				conn_cut(&sv->conns[i], 408, "the request "
					 "header took more than 5 s");
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 250000000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&sv->wake, &sv->lock, &ts);
	}
	pthread_mutex_unlock(&sv->lock);
	return NULL;
}

/*
 * The URI as it came, before libmicrohttpd parses it: one over URI_MAX
 * is marked in the request's context, and answered 414; one of more
 * than ARGS_MAX query parameters is answered 400 here and cut, since
 * libmicrohttpd, its memory full of them, would answer nothing.
 */
static void *uri_seen(void *cls, const char *uri, struct MHD_Connection *c)
{
	struct server *sv = cls;
	const char *q = strchr(uri, '?');
	struct conn *k;
	size_t args = 0;

	for (; q && *q; q++)
		args += *q == '&' || *q == '?';
	if (args > ARGS_MAX && (k = conn_of(c))) {
		pthread_mutex_lock(&sv->lock);
		if (k->state != C_CUT && k->state != C_FREE)
			conn_cut(k, 400, "too many query parameters (at most "
				 "64)");
		pthread_mutex_unlock(&sv->lock);
	}
	return strlen(uri) > URI_MAX ? &uri_too_long : NULL;
}

static MHD_RESULT count_bytes(void *cls, enum MHD_ValueKind kind,
			       const char *key, const char *value)
{
	size_t *n = cls;

	(void)kind;
	*n += strlen(key) + (value ? strlen(value) : 0) + 4;
	return MHD_YES;
}

/* 0, or the status of a request too big to answer, *why set. */
static unsigned oversized(struct MHD_Connection *c, void *ctx,
			  const char **why)
{
	size_t bytes = 0;

	if (ctx == &uri_too_long) {
		*why = "the URI is too long (at most 8192 bytes)";
		return MHD_HTTP_URI_TOO_LONG;
	}
	if (mhd.MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, NULL,
					  NULL) > ARGS_MAX) {
		*why = "too many query parameters (at most 64)";
		return MHD_HTTP_BAD_REQUEST;
	}
	mhd.MHD_get_connection_values(c, MHD_HEADER_KIND, count_bytes, &bytes);
	if (bytes > HEADERS_MAX) {
		*why = "the header fields are too large (at most 16384 bytes)";
		return MHD_HTTP_REQUEST_HEADER_FIELDS_TOO_LARGE;
	}
	return 0;
}

/* The response's own csp, NULL: the page's (CSP). */
static void add_headers(struct MHD_Response *resp, const char *mime,
			const char *csp)
{
	mhd.MHD_add_response_header(resp, "Content-Type", mime);
	mhd.MHD_add_response_header(resp, "Content-Security-Policy",
				csp ? csp : CSP);
	mhd.MHD_add_response_header(resp, "X-Content-Type-Options",
				    "nosniff");
	mhd.MHD_add_response_header(resp, "X-Frame-Options", "DENY");
	mhd.MHD_add_response_header(resp, "Referrer-Policy", "no-referrer");
	mhd.MHD_add_response_header(resp, "Cache-Control", "no-store");
	mhd.MHD_add_response_header(resp, "Cross-Origin-Resource-Policy",
				"same-origin");
}

/* the server time of the API call being answered (Server-Timing), or
 * a negative number */
static __thread double api_ms = -1;

static MHD_RESULT send_buf_csp(struct MHD_Connection *c, unsigned status,
			       const char *mime, const char *csp, void *buf,
			       size_t len, enum MHD_ResponseMemoryMode mode)
{
	char timing[64];

	struct MHD_Response *resp;
	MHD_RESULT ret;

	resp = mhd.MHD_create_response_from_buffer(len, buf, mode);
	if (!resp) {
		if (mode == MHD_RESPMEM_MUST_FREE)
			free(buf);
		return MHD_NO;
	}
	add_headers(resp, mime, csp);
	if (api_ms >= 0) {
		snprintf(timing, sizeof(timing), "api;dur=%.2f", api_ms);
		mhd.MHD_add_response_header(resp, "Server-Timing", timing);
		api_ms = -1;
	}
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		mhd.MHD_add_response_header(resp, "Allow", "GET, HEAD");
	/* a refused request's connection is not kept for another */
	if (status >= 400 && status < 500 && status != MHD_HTTP_NOT_FOUND)
		mhd.MHD_add_response_header(resp, "Connection", "close");
	ret = mhd.MHD_queue_response(c, status, resp);
	mhd.MHD_destroy_response(resp);
	return ret;
}

static MHD_RESULT send_buf(struct MHD_Connection *c, unsigned status,
			   const char *mime, void *buf, size_t len,
			   enum MHD_ResponseMemoryMode mode)
{
	return send_buf_csp(c, status, mime, NULL, buf, len, mode);
}

/* A JSON body: '<', '>' and '&' (only ever inside strings) as \u00XX,
 * so that no browser can take a dump's "</script>" for markup. */
static MHD_RESULT send_json(struct MHD_Connection *c, unsigned status,
			    char *body, size_t len)
{
	size_t i, extra = 0, k = 0;
	char *out;

	for (i = 0; i < len; i++)
		if (body[i] == '<' || body[i] == '>' || body[i] == '&')
			extra += 5;
	if (!extra)
		return send_buf(c, status, "application/json; charset=utf-8",
				body, len, MHD_RESPMEM_MUST_FREE);
	if (!(out = malloc(len + extra))) {
		free(body);
		return MHD_NO;
	}
	for (i = 0; i < len; i++) {
		if (body[i] == '<' || body[i] == '>' || body[i] == '&') {
			snprintf(out + k, 7, "\\u%04x", (unsigned)body[i]);
			k += 6;
		} else {
			out[k++] = body[i];
		}
	}
	free(body);
	return send_buf(c, status, "application/json; charset=utf-8", out, k,
			MHD_RESPMEM_MUST_FREE);
}

static MHD_RESULT send_error(struct MHD_Connection *c, unsigned status,
			     const char *msg)
{
	char *b = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&b, &n);

	if (!f)
		return MHD_NO;
	fprintf(f, "{\"error\":");
	cli_json_string(f, msg, strlen(msg));
	fprintf(f, "}\n");
	fclose(f);
	return send_json(c, status, b, n);
}

/* index.html with its @TOKEN@ replaced: the page asks for its script
 * and style with the token, as every request must. */
static MHD_RESULT send_page(struct MHD_Connection *c,
			    const struct serve_asset *a, const char *token)
{
	static const char mark[] = "@TOKEN@";
	const char *p = (const char *)a->data, *end = p + a->len, *q;
	char *out = malloc(a->len * 2 + 64), *w = out;

	if (!out)
		return MHD_NO;
	while (p < end) {
		q = strstr(p, mark);
		if (!q || q >= end)
			q = end;
		memcpy(w, p, (size_t)(q - p));
		w += q - p;
		if (q == end)
			break;
		memcpy(w, token, SERVE_TOKEN_LEN);
		w += SERVE_TOKEN_LEN;
		p = q + sizeof(mark) - 1;
	}
	return send_buf(c, MHD_HTTP_OK, a->mime, out, (size_t)(w - out),
			MHD_RESPMEM_MUST_FREE);
}

/* The token from ?token= or "Authorization: Bearer TOKEN". */
static const char *given_token(struct MHD_Connection *c)
{
	const char *t = mhd.MHD_lookup_connection_value(
		c, MHD_GET_ARGUMENT_KIND, "token");
	const char *h;

	if (t)
		return t;
	h = mhd.MHD_lookup_connection_value(c, MHD_HEADER_KIND,
					    "Authorization");
	if (h && strncmp(h, "Bearer ", 7) == 0)
		return h + 7;
	return NULL;
}

static MHD_RESULT handle(void *cls, struct MHD_Connection *c, const char *url,
			 const char *method, const char *version,
			 const char *upload, size_t *upload_size, void **con)
{
	struct server *sv = cls;
	const struct serve_asset *a;
	struct serve_req req;
	struct serve_resp resp = { 200, NULL, 0, NULL, NULL };
	const char *why;
	unsigned status;
	double t0;

	(void)version;
	(void)upload;
	(void)upload_size;
	conn_set(sv, c, C_BUSY, 0);
	if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
		return send_error(c, MHD_HTTP_METHOD_NOT_ALLOWED,
				  "read-only: GET and HEAD only");
	if ((status = oversized(c, *con, &why)))
		return send_error(c, status, why);
	if (!serve_token_equal(given_token(c), sv->o->token))
		return send_error(c, MHD_HTTP_FORBIDDEN,
				  "a valid token is required: open the URL "
				  "heapdump serve printed");
	conn_set(sv, c, C_BUSY, 1);
	if (strncmp(url, "/api/", 5) == 0) {
		req.path = url + 5;
		req.arg = conn_arg;
		req.conn = c;
		t0 = cli_now();
		serve_api(sv->st, &req, &resp);
		api_ms = (cli_now() - t0) * 1000;
		if (!resp.body)
			return send_error(c, 500, "out of memory");
		if (resp.mime) /* a drawing, with its own policy */
			return send_buf_csp(c, resp.status, resp.mime,
					    resp.csp, resp.body, resp.len,
					    MHD_RESPMEM_MUST_FREE);
		return send_json(c, resp.status, resp.body, resp.len);
	}
	if (strcmp(url, "/") == 0)
		url = "/index.html";
	for (a = serve_assets; a->path; a++) {
		if (strcmp(a->path, url) != 0)
			continue;
		if (strcmp(url, "/index.html") == 0)
			return send_page(c, a, sv->o->token);
		return send_buf(c, MHD_HTTP_OK, a->mime, (void *)a->data,
				a->len, MHD_RESPMEM_PERSISTENT);
	}
	return send_error(c, MHD_HTTP_NOT_FOUND, "no such page");
}

int serve_http_run(const struct serve_http_opts *o, struct serve_state *st)
{
	struct server *sv;
	struct sockaddr_storage ss;
	struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
	const char *bind = o->bind ? o->bind : "127.0.0.1";
	unsigned flags = MHD_USE_AUTO_INTERNAL_THREAD;
	const union MHD_DaemonInfo *di;
	struct MHD_Daemon *d;
	pthread_t watcher;
	sigset_t set;
	unsigned port;
	int sig, v6 = 0, rc = 0, watching;

	if (serve_http_load())
		return EXIT_FAIL;
	if (!(sv = calloc(1, sizeof(*sv)))) {
		cli_error("serve: out of memory");
		return EXIT_FAIL;
	}
	sv->o = o;
	sv->st = st;
	pthread_mutex_init(&sv->lock, NULL);
	pthread_cond_init(&sv->wake, NULL);
	memset(&ss, 0, sizeof(ss));
	if (inet_pton(AF_INET, bind, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		s4->sin_port = htons((unsigned short)o->port);
	} else if (inet_pton(AF_INET6, bind, &s6->sin6_addr) == 1) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((unsigned short)o->port);
		flags |= MHD_USE_IPv6;
		v6 = 1;
	} else {
		cli_error("--bind: '%s' is no numeric IPv4 or IPv6 address",
			  bind);
		free(sv);
		return EXIT_USAGE;
	}
	/* SIGINT and SIGTERM end the server: blocked here (the server's
	 * thread inherits the mask) and taken by sigwait below */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	/* the watcher inherits the mask too */
	watching = !pthread_create(&watcher, NULL, watch, sv);
	d = mhd.MHD_start_daemon(
		flags, (uint16_t)o->port, NULL, NULL, handle, sv,
		MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
		MHD_OPTION_THREAD_POOL_SIZE, (unsigned)THREADS,
		MHD_OPTION_CONNECTION_LIMIT, (unsigned)CONN_MAX,
		MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)PER_ADDR_MAX,
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)IDLE_SECS,
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)MEM_PER_CONN,
		MHD_OPTION_NOTIFY_CONNECTION, conn_notify, sv,
		MHD_OPTION_NOTIFY_COMPLETED, request_done, sv,
		MHD_OPTION_URI_LOG_CALLBACK, uri_seen, sv,
		MHD_OPTION_END);
	if (!d) {
		cli_error("cannot listen on %s port %u (in use, or not an "
			  "address of this machine)", bind, o->port);
		rc = EXIT_FAIL;
		goto out;
	}
	di = mhd.MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
	port = di ? di->port : o->port;
	fprintf(stderr, "%s: serving on http://%s%s%s:%u/?token=%s\n",
		PROGRAM_NAME, v6 ? "[" : "", bind, v6 ? "]" : "", port,
		o->token);
	fprintf(stderr, "%s: port %u; Ctrl-C stops\n", PROGRAM_NAME, port);
	fflush(stderr);
	sigwait(&set, &sig);
	mhd.MHD_stop_daemon(d);
	if (!o->quiet)
		fprintf(stderr, "%s: stopped\n", PROGRAM_NAME);
out:
	pthread_mutex_lock(&sv->lock);
	sv->stop = 1;
	pthread_cond_signal(&sv->wake);
	pthread_mutex_unlock(&sv->lock);
	if (watching)
		pthread_join(watcher, NULL);
	pthread_cond_destroy(&sv->wake);
	pthread_mutex_destroy(&sv->lock);
	free(sv);
	return rc;
}

#else /* !HAVE_MHD */

int serve_http_available(void)
{
	return 0;
}

int serve_http_load(void)
{
	return EXIT_FAIL;
}

int serve_http_run(const struct serve_http_opts *o, struct serve_state *st)
{
	(void)o;
	(void)st;
	cli_error("serve: this heapdump was built without libmicrohttpd: "
		  "install libmicrohttpd-dev (make deps) and rebuild");
	return EXIT_FAIL;
}

#endif
