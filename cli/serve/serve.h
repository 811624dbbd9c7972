/*
 * serve.h - heapdump serve: the HTTP server (http.c, the one file
 * that includes libmicrohttpd's header), the JSON API over the stores
 * (api.c) and the page's files compiled into the program
 * (cli/serve/web/, embedded by cli/serve/web/embed.sh into serve_assets.c).
 */
#ifndef CLI_SERVE_H
#define CLI_SERVE_H

#include <stddef.h>
#include <stdio.h>

#include "heapdump.h"

/* One file of the page, served as it is. NULL-terminated table. */
struct serve_asset {
	const char *path; /* "/app.js" */
	const char *mime;
	const unsigned char *data;
	size_t len;
};
extern const struct serve_asset serve_assets[];

/* The length of the access token, in hex digits (128 random bits). */
#define SERVE_TOKEN_LEN 32

/* dumps serve takes: DUMP, or BEFORE AFTER [STEP...] LATER as leaks */
#define SERVE_MAX_DUMPS 16

/* A request as the API sees it: the path after /api/ and a way to read
 * its query arguments (decoded, NULL when absent). */
struct serve_req {
	const char *path;
	const char *(*arg)(const struct serve_req *r, const char *name);
	void *conn;
};

/* A response: status and a malloc'ed JSON body (mime NULL: JSON, with
 * the page's Content-Security-Policy; else the body as it is, with csp:
 * draw.c's SVG drawings). */
struct serve_resp {
	unsigned status;
	char *body;
	size_t len;
	const char *mime;
	const char *csp;
};

struct serve_state;

/* api.c: the inputs opened and the analyses every request uses
 * computed once (paths, dominators, groups, strings, diff and leaks).
 * A dump is opened through its cached store (hd_store_open_cached, kept
 * with its dominator tree) unless no_cache.
 * Returns 0 or an exit code after the message. */
int serve_state_open(struct serve_state **out, char **paths, int n,
		     int quiet, int no_cache);
void serve_state_free(struct serve_state *st);
/* Answers one API call. */
void serve_api(struct serve_state *st, const struct serve_req *r,
	       struct serve_resp *resp);

/* state.c, what draw.c reads of the state: the store examined,
 * its dominator tree, its search from the roots (NULL when it failed:
 * out of memory), the leak model (NULL
 * with one dump), and the dominator tree's children of v (HD_DOM_ROOT:
 * of the virtual root), largest retained first, *n of them. */
const hd_store *serve_state_store(const struct serve_state *st);
const hd_domtree *serve_state_domtree(const struct serve_state *st);
const hd_reach *serve_state_reach(struct serve_state *st);
/* The base of the store's drawings (hd_export_base, HD_EXPORT_COLLAPSE),
 * made once: NULL when memory ran out (a drawing then makes its own). */
const hd_export_base *serve_state_export_base(struct serve_state *st);
const hd_leaks *serve_state_leaks(const struct serve_state *st);
const hd_node_id *serve_state_kids(const struct serve_state *st,
				   hd_node_id v, uint32_t *n);

/* draw.c: the drawings (/api/treemap, /api/graph.svg). Returns 1
 * when the call is one of them (resp set), 0 otherwise. */
int serve_draw_api(struct serve_state *st, const struct serve_req *r,
		   struct serve_resp *resp);

/* flame.c: /api/flame, a bounded part of the heap's flame graph. */
void serve_api_flame(struct serve_state *st, const struct serve_req *r,
		     struct serve_resp *resp);

/* http.c */
struct serve_http_opts {
	const char *bind;   /* numeric address; NULL: 127.0.0.1 */
	unsigned port;      /* 0: any free port */
	const char *token;  /* SERVE_TOKEN_LEN hex digits */
	int quiet;
};
/* 1 if the program was built with libmicrohttpd (make MHD=1). */
int serve_http_available(void);
/* Loads libmicrohttpd (once; dynlib.h): 0, or EXIT_FAIL after the
 * message. */
int serve_http_load(void);
/* Runs the server until SIGINT or SIGTERM. Returns 0 or an exit code. */
int serve_http_run(const struct serve_http_opts *o, struct serve_state *st);
/* 1 if the numeric address addr is a loopback address (127.0.0.0/8,
 * ::1), 0 otherwise, -1 if it is no numeric address. */
int serve_addr_loopback(const char *addr);
/* Tokens compared in time that does not depend on where they differ. */
int serve_token_equal(const char *given, const char *token);

#endif
