/*
 * cmd_serve.c - heapdump serve: a local web UI over one dump or store
 * (or two or three: the diff and the leak suspects). The inputs are
 * indexed (or mapped) once and every request is answered from them
 * (serve/api.c) by libmicrohttpd (serve/http.c), on 127.0.0.1 unless
 * --bind, for the holder of a random token only, read-only.
 */
#include "cmd.h"
#include "common.h"
#include "opt.h"
#include "serve/serve.h"
#include "sidecar.h"

#include <errno.h>
#include <string.h>
#include <sys/random.h>

#define COMMAND_NAME "serve"

static struct serve_args {
	const char *bind;
	unsigned long long port;
	int quiet;
	int no_cache;
} A;

static const struct cli_opt opts[] = {
	OPT_STRING(0, "bind", "ADDR", &A.bind,
		   "listen on this numeric address (default 127.0.0.1; "
		   "anything else warns: the heap holds secrets)"),
	OPT_UINT('p', "port", "N", &A.port,
		 "listen on port N (default 0: any free port, printed)"),
	OPT_FLAG(0, "no-cache", &A.no_cache,
		 "index a dump in memory: neither read nor write its "
		 "cached store (DUMP.hds, or in $XDG_CACHE_HOME/heapdump)"),
	OPT_FLAG('q', "quiet", &A.quiet, "no progress meter"),
	OPT_END()
};

static const struct cli_cmd_info info = {
	COMMAND_NAME, "[options] DUMP|STORE | BEFORE AFTER [STEP...] [LATER]",
	"Browse a heap dump or store in a local web page (and its JSON API):\n"
	"overview, groups, objects, paths, dominator tree, search; with two\n"
	"dumps or more (BEFORE AFTER [STEP...] [LATER], up to sixteen), the\n"
	"diff and the leak suspects.",
	opts
};

/* SERVE_TOKEN_LEN hex digits of getrandom(2)'s bytes into tok. */
static int make_token(char *tok)
{
	unsigned char r[SERVE_TOKEN_LEN / 2];
	size_t got = 0, i;
	ssize_t n;

	while (got < sizeof(r)) {
		n = getrandom(r + got, sizeof(r) - got, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			cli_error("serve: getrandom: %s", strerror(errno));
			return EXIT_FAIL;
		}
		got += (size_t)n;
	}
	for (i = 0; i < sizeof(r); i++)
		snprintf(tok + 2 * i, 3, "%02x", r[i]);
	return 0;
}

int cmd_serve(int argc, char **argv)
{
	struct serve_http_opts ho = { NULL, 0, NULL, 0 };
	struct serve_state *st = NULL;
	char tok[SERVE_TOKEN_LEN + 1];
	int rc, first, n;

	memset(&A, 0, sizeof(A));
	if ((rc = cli_parse(&info, argc, argv, &first)))
		return rc < 0 ? EXIT_OK : rc;
	argc = cli_skip_sidecars(argc, argv, first); /* a glob of dumps */
	n = argc - first;
	if (n < 1 || n > SERVE_MAX_DUMPS)
		return cli_usage_error(&info, n < 1 ? "a dump or store is "
				       "needed" : "at most sixteen dumps "
				       "(BEFORE AFTER [STEP...] LATER)");
	if (A.port > 65535)
		return cli_usage_error(&info, "--port: %llu is no port "
				       "(0 to 65535)", A.port);
	if (A.bind) {
		int lo = serve_addr_loopback(A.bind);

		if (lo < 0)
			return cli_usage_error(&info, "--bind: '%s' is no "
					       "numeric IPv4 or IPv6 address",
					       A.bind);
		if (!lo)
			cli_error("warning: listening on %s, not on loopback: "
				  "anyone who can reach it and has the token "
				  "can read the heap, and its secrets", A.bind);
	}
	if (!serve_http_available())
		return serve_http_run(&ho, NULL);
	if ((rc = serve_http_load())) /* before the dumps are read */
		return rc;
	if ((rc = make_token(tok)))
		return rc;
	if ((rc = serve_state_open(&st, argv + first, n, A.quiet,
				   A.no_cache)))
		return rc;
	ho.bind = A.bind;
	ho.port = (unsigned)A.port;
	ho.token = tok;
	ho.quiet = A.quiet;
	rc = serve_http_run(&ho, st);
	serve_state_free(st);
	return rc;
}
