/*
 * serve_http.c - heapdump serve's HTTP side, on libmicrohttpd: the
 * listening socket (127.0.0.1 unless --bind), the token every request
 * must carry, GET and HEAD only, the security headers, the page's files
 * from the program and the API (serve_api.c). The one file that
 * includes microhttpd.h; built without it (make MHD=0), serve says how
 * to get it.
 */
#include "common.h"
#include "serve.h"

#include <arpa/inet.h>
#include <netinet/in.h>
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

#include "dynlib.h"

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
	MHD_SYM(MHD_destroy_response), MHD_SYM(MHD_get_daemon_info),
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

struct server {
	const struct serve_http_opts *o;
	struct serve_state *st;
};

static const char *conn_arg(const struct serve_req *r, const char *name)
{
	return mhd.MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND,
					   name);
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
static double api_ms = -1;

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
	double t0;

	(void)version;
	(void)upload;
	(void)upload_size;
	(void)con;
	if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
		return send_error(c, MHD_HTTP_METHOD_NOT_ALLOWED,
				  "read-only: GET and HEAD only");
	if (!serve_token_equal(given_token(c), sv->o->token))
		return send_error(c, MHD_HTTP_FORBIDDEN,
				  "a valid token is required: open the URL "
				  "heapdump serve printed");
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
	struct server sv = { o, st };
	struct sockaddr_storage ss;
	struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
	const char *bind = o->bind ? o->bind : "127.0.0.1";
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD;
	const union MHD_DaemonInfo *di;
	struct MHD_Daemon *d;
	sigset_t set;
	unsigned port;
	int sig, v6 = 0;

	if (serve_http_load())
		return EXIT_FAIL;
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
	d = mhd.MHD_start_daemon(flags, (uint16_t)o->port, NULL, NULL, handle,
				 &sv, MHD_OPTION_SOCK_ADDR,
				 (struct sockaddr *)&ss,
				 MHD_OPTION_CONNECTION_LIMIT, (unsigned)64,
				 MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)30,
				 MHD_OPTION_END);
	if (!d) {
		cli_error("cannot listen on %s port %u (in use, or not an "
			  "address of this machine)", bind, o->port);
		return EXIT_FAIL;
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
	return 0;
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
