/*
 * cmd_mcp.c - heapdump mcp: a Model Context Protocol server on standard
 * input and output (JSON-RPC 2.0, one message a line) whose tools are
 * the analyses: the commands themselves (this program run again with
 * -f json: stats, top, leaks, diff, trend, path, strings, waste, so
 * that their answers are theirs, whatever their JSON becomes), serve's
 * JSON API for what only it pages (serve_api.c: overview, objects,
 * object with references and referrers, domtree, search) and read-only
 * SQL (query_out.c over the library's hd_sql_open); every answer
 * bounded (rows capped at 1,000, paging by offset, answers at 1 MiB,
 * SQL at 256 KiB).
 * The requests are parsed by mcp_json.c (fuzzed by
 * tests/fuzz/fuzz_mcp.c); nothing here writes a file (the cached
 * stores are serve_state's, the kept leak report is leaks'; --no-cache
 * asks neither).
 */
#include "cmd.h"
#include "common.h"
#include "mcp_json.h"
#include "opt.h"
#include "query.h"
#include "serve/serve.h"
#include "sidecar.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define COMMAND_NAME "mcp"
#define MCP_LATEST "2025-06-18"
#define MCP_MAX_LINE (1u << 20)    /* a request of more is refused */
#define MCP_MAX_SQL_OUT (256u << 10)
#define MCP_MAX_OUT (1u << 20)     /* a command's answer of more is refused */

static const char *const versions[] = { "2025-06-18", "2025-03-26",
					"2024-11-05", NULL };

struct mcp_args {
	int quiet, no_cache;
};

static struct mcp_args A;

static const struct cli_opt opts[] = {
	OPT_FLAG('q', "quiet", &A.quiet, "no progress meter while indexing"),
	OPT_FLAG(0, "no-cache", &A.no_cache,
		 "index dumps in memory, not through the store cache"),
	OPT_END()
};

static const struct cli_cmd_info info = {
	COMMAND_NAME, "[options] DUMP|STORE | BEFORE AFTER [LATER]",
	"A Model Context Protocol server on standard input and output: an\n"
	"assistant asks the heap through its tools (overview, stats, objects,\n"
	"object, top, search, diff, leaks, query), each answer bounded.\n"
	"Configure it as a stdio server: command heapdump, args [\"mcp\", ...].",
	opts
};

/* ---- the tools ---- */

struct tool {
	const char *name, *api, *desc, *schema;
	int dumps; /* dumps needed */
	const char *cmd; /* run as heapdump CMD -f json (the command's own
			  * JSON), or NULL */
};

#define PAGE "\"offset\":{\"type\":\"integer\",\"minimum\":0}," \
	     "\"limit\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":1000}"
#define TOPN "\"top\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":1000}"
#define BY "\"by\":{\"type\":\"string\",\"pattern\":\"^[a-z,]+$\"}"

static const struct tool tools[] = {
	{ "overview", "overview",
	  "The heap at a glance: totals, the largest classes and retainers, "
	  "the Ruby version, the leak verdict when there are several dumps.",
	  "{}", 1, NULL },
	{ "stats", NULL,
	  "Objects and memory of the last dump by keys (type, class, file, "
	  "location, method, gem, generation, imemo, length; comma-separated), "
	  "as heapdump stats -f json, top rows per table.",
	  "{" BY ",\"sort\":{\"type\":\"string\",\"enum\":[\"count\","
	  "\"memsize\"]}," TOPN "}", 1, "stats" },
	{ "top", NULL,
	  "What retains the most memory in the last dump (dominator tree), by "
	  "object or by class, as heapdump top -f json.",
	  "{\"by\":{\"type\":\"string\",\"enum\":[\"object\",\"class\"]},"
	  TOPN "}", 1, "top" },
	{ "leaks", NULL,
	  "The leak hunt over the dumps (oldest first): the verdict, the "
	  "suspects with their holders, retention paths and allocation sites, "
	  "as heapdump leaks -f json.",
	  "{" TOPN "}", 2, "leaks" },
	{ "diff", NULL,
	  "The objects new in AFTER (still alive in LATER) by class and "
	  "allocation site, as heapdump diff -f json.",
	  "{" BY ",\"sort\":{\"type\":\"string\",\"enum\":[\"count\","
	  "\"memsize\"]}," TOPN "}", 2, "diff" },
	{ "trend", NULL,
	  "How each class (or key) grows over the dumps, as heapdump trend "
	  "-f json.", "{" BY "," TOPN "}", 2, "trend" },
	{ "path", NULL,
	  "A retention path from a GC root to the object at address in the "
	  "last dump, as heapdump path -f json.",
	  "{\"address\":{\"type\":\"string\",\"pattern\":"
	  "\"^0x[0-9a-fA-F]+$\"}}", 1, "path" },
	{ "strings", NULL,
	  "The most repeated string values of the last dump and the memory "
	  "their copies waste, as heapdump strings -f json.",
	  "{\"by\":{\"type\":\"string\",\"enum\":[\"value\",\"site\","
	  "\"holder\"]}," TOPN "}", 1, "strings" },
	{ "waste", NULL,
	  "Memory held for nothing in the last dump: empty collections, spare "
	  "capacity, duplicates, as heapdump waste -f json.",
	  "{" TOPN "}", 1, "waste" },
	{ "objects", "objects",
	  "The objects of one group (by and key, as stats names them), with "
	  "their addresses, paged.",
	  "{\"by\":{\"type\":\"string\"},\"key\":{\"type\":\"string\"}," PAGE
	  "}", 1, NULL },
	{ "object", "object",
	  "One object by address: its record, its retention path from a GC "
	  "root, its references and referrers (paged), retained size.",
	  "{\"address\":{\"type\":\"string\",\"pattern\":\"^0x[0-9a-fA-F]+$\"},"
	  PAGE "}", 1, NULL },
	{ "domtree", "domtree",
	  "The dominator tree: the children of node (an address; default: "
	  "the roots), largest retained first, paged.",
	  "{\"node\":{\"type\":\"string\"}," PAGE "}", 1, NULL },
	{ "search", "search",
	  "Objects and groups matching q: an address, a class name, a file.",
	  "{\"q\":{\"type\":\"string\"},\"kind\":{\"type\":\"string\"},"
	  "\"limit\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":1000}}",
	  1, NULL },
	{ "query", NULL,
	  "Read-only SQL over the last dump (SQLite; tables objects, refs, "
	  "roots; functions path(address), retained(address)): SELECT only, "
	  "rows as NDJSON, at most 256 KiB (use LIMIT).",
	  "{\"sql\":{\"type\":\"string\"}}", 1, NULL },
	{ NULL, NULL, NULL, NULL, 0, NULL }
};

/* ---- output ---- */

static void jstr(FILE *f, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	size_t i;

	fputc('"', f);
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '"' || c == '\\') {
			fputc('\\', f);
			fputc(c, f);
		} else if (c < 0x20) {
			fprintf(f, "\\u00%c%c", hex[c >> 4], hex[c & 15]);
		} else {
			fputc(c, f);
		}
	}
	fputc('"', f);
}

static void reply_head(const struct mj *id)
{
	fputs("{\"jsonrpc\":\"2.0\",\"id\":", stdout);
	if (id && (id->t == MJ_STR || id->t == MJ_NUM))
		fwrite(id->raw, 1, id->rawlen, stdout);
	else
		fputs("null", stdout);
}

static void reply_error(const struct mj *id, int code, const char *msg)
{
	reply_head(id);
	printf(",\"error\":{\"code\":%d,\"message\":", code);
	jstr(stdout, msg, strlen(msg));
	fputs("}}\n", stdout);
	fflush(stdout);
}

/* A tool's answer: text (JSON) as its one content, isError when err. */
static void reply_tool(const struct mj *id, const char *text, size_t n,
		       int err)
{
	reply_head(id);
	fputs(",\"result\":{\"content\":[{\"type\":\"text\",\"text\":", stdout);
	jstr(stdout, text, n);
	printf("}],\"isError\":%s}}\n", err ? "true" : "false");
	fflush(stdout);
}

/* ---- requests ---- */

struct argreq {
	struct serve_req r;
	const struct mj *args;
	char buf[64];
};

/* serve_req's argument reader over the call's JSON arguments: a string
 * as it is, an integer as its text, anything else absent. */
static const char *arg_of(const struct serve_req *r, const char *name)
{
	struct argreq *a = (struct argreq *)(void *)r;
	const struct mj *v = mj_get(a->args, name);

	if (!v)
		return NULL;
	if (v->t == MJ_STR)
		return v->s;
	if (v->t == MJ_NUM)
		return v->s;
	return "\x01"; /* neither: an invalid value, never a default */
}

static void call_sql(struct serve_state *st, const struct mj *id,
		     const struct mj *args)
{
	const struct mj *q = mj_get(args, "sql");
	sqlite3 *db = NULL;
	hd_error err = { 0 };
	char *buf = NULL;
	size_t n = 0;
	FILE *f;
	int rc;

	if (!q || q->t != MJ_STR || !q->n) {
		reply_tool(id, "{\"error\":\"sql: a SELECT statement\"}", 35, 1);
		return;
	}
	if (hd_sql_open(&db, serve_state_store(st), &err) ||
	    query_load_sqlite()) {
		const char *m = err.msg[0] ? err.msg : "SQLite cannot be loaded";

		reply_tool(id, m, strlen(m), 1);
		hd_sql_close(db);
		return;
	}
	if (!(f = open_memstream(&buf, &n))) {
		hd_sql_close(db);
		reply_error(id, -32603, "out of memory");
		return;
	}
	rc = query_run(db, q->s, QF_JSON, f);
	fclose(f);
	hd_sql_close(db);
	if (rc) {
		static const char m[] = "{\"error\":\"the statement was refused "
			"or failed: one read-only SELECT over objects, refs "
			"and roots\"}";

		reply_tool(id, m, sizeof(m) - 1, 1);
	} else if (n > MCP_MAX_SQL_OUT) {
		static const char m[] = "{\"error\":\"the answer is over 256 "
			"KiB: add a LIMIT, or fewer columns\"}";

		reply_tool(id, m, sizeof(m) - 1, 1);
	} else {
		reply_tool(id, buf ? buf : "", n, 0);
	}
	free(buf);
}

/* The dumps the server was given (for the commands it runs), and this
 * program's file, read once (readlink, which valgrind answers with its
 * client's: an exec of /proc/self/exe would run valgrind's tool). */
static char **g_dumps;
static int g_ndumps;
static char g_self[4096];

/* Reads fd to its end into *buf, keeping at most cap + 1 bytes. */
static void drain(int fd, char **buf, size_t *n, size_t cap)
{
	char tmp[65536];
	ssize_t k;

	*buf = malloc(cap + 2);
	*n = 0;
	while ((k = read(fd, tmp, sizeof(tmp))) > 0 ||
	       (k < 0 && errno == EINTR)) {
		size_t take;

		if (k < 0)
			continue;
		take = *buf && *n <= cap ? (size_t)k : 0;
		if (take > cap + 1 - *n)
			take = cap + 1 - *n;
		if (take)
			memcpy(*buf + *n, tmp, take);
		*n += take;
	}
	if (*buf)
		(*buf)[*n] = 0;
}

/* heapdump argv[1...] (this very program), its standard output into
 * *out (at most cap + 1 bytes), its standard error into *err; returns
 * its exit status, or -1. */
static int run_cli(char *const argv[], char **out, size_t *on, char **err,
		   size_t *en, size_t cap)
{
	int po[2], pe[2], status;
	pid_t pid;

	*out = *err = NULL;
	*on = *en = 0;
	if (pipe(po))
		return -1;
	if (pipe(pe)) {
		close(po[0]);
		close(po[1]);
		return -1;
	}
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		int nul = open("/dev/null", O_RDONLY);

		dup2(nul, 0);
		dup2(po[1], 1);
		dup2(pe[1], 2);
		close(po[0]);
		close(pe[0]);
		execv(g_self, argv);
		_exit(127);
	}
	close(po[1]);
	close(pe[1]);
	if (pid < 0) {
		close(po[0]);
		close(pe[0]);
		return -1;
	}
	/* stderr is small; stdout first, then stderr (a command writes
	 * its messages after or before its answer, never a pipe-full) */
	drain(po[0], out, on, cap);
	drain(pe[0], err, en, 4096);
	close(po[0]);
	close(pe[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* An integer argument in [1, 1000], as text into buf; 0 if absent, -1
 * if not one. */
static int arg_top(const struct mj *args, char buf[16])
{
	const struct mj *v = mj_get(args, "top");
	char *end;
	long x;

	if (!v)
		return 0;
	if (v->t != MJ_NUM && v->t != MJ_STR)
		return -1;
	x = strtol(v->s, &end, 10);
	if (*end || x < 1 || x > 1000)
		return -1;
	snprintf(buf, 16, "%ld", x);
	return 1;
}

/* A word argument of letters, commas and underscores, or NULL; *bad
 * set when present and not one. */
static const char *arg_word(const struct mj *args, const char *name,
			    int *bad)
{
	const struct mj *v = mj_get(args, name);

	if (!v)
		return NULL;
	if (v->t != MJ_STR || !v->n || v->n > 64 ||
	    strspn(v->s, "abcdefghijklmnopqrstuvwxyz,_") != v->n) {
		*bad = 1;
		return NULL;
	}
	return v->s;
}

static void call_cli(const struct tool *t, const struct mj *id,
		     const struct mj *args)
{
	char *argv[32], top[16], msg[200];
	char *out, *err;
	size_t on, en;
	int n = 0, i, bad = 0, rc;
	const char *by = arg_word(args, "by", &bad);
	const char *sort = arg_word(args, "sort", &bad);
	const struct mj *addr = mj_get(args, "address");

	if ((rc = arg_top(args, top)) < 0 || bad) {
		snprintf(msg, sizeof(msg), "{\"error\":\"%s: top is 1 to 1000; "
			 "by and sort are words (see tools/list)\"}", t->name);
		return reply_tool(id, msg, strlen(msg), 1);
	}
	argv[n++] = (char *)"heapdump";
	argv[n++] = (char *)t->cmd;
	argv[n++] = (char *)"-q";
	argv[n++] = (char *)"-f";
	argv[n++] = (char *)"json";
	if (rc > 0) {
		argv[n++] = (char *)"-n";
		argv[n++] = top;
	}
	if (by) {
		argv[n++] = (char *)"--by";
		argv[n++] = (char *)by;
	}
	if (sort) {
		argv[n++] = (char *)"--sort";
		argv[n++] = (char *)sort;
	}
	/* leaks keeps its report (and reads it back while the dumps are
	 * the same) unless --no-cache */
	if (A.no_cache && !strcmp(t->cmd, "leaks"))
		argv[n++] = (char *)"--no-cache";
	argv[n++] = (char *)"--";
	if (!strcmp(t->cmd, "leaks") || !strcmp(t->cmd, "diff") ||
	    !strcmp(t->cmd, "trend"))
		for (i = 0; i < g_ndumps; i++)
			argv[n++] = g_dumps[i];
	else
		argv[n++] = g_dumps[g_ndumps - 1];
	if (!strcmp(t->cmd, "path")) {
		if (!addr || addr->t != MJ_STR || addr->n < 3 || addr->n > 18 ||
		    strncmp(addr->s, "0x", 2) ||
		    strspn(addr->s + 2, "0123456789abcdefABCDEF") != addr->n - 2) {
			static const char m[] = "{\"error\":\"address: a hex "
						"address (0x...)\"}";

			return reply_tool(id, m, sizeof(m) - 1, 1);
		}
		argv[n++] = addr->s;
	}
	argv[n] = NULL;
	rc = run_cli(argv, &out, &on, &err, &en, MCP_MAX_OUT);
	if (rc == 0 && out && on <= MCP_MAX_OUT) {
		reply_tool(id, out, on, 0);
	} else if (rc == 0 && out) {
		snprintf(msg, sizeof(msg), "{\"error\":\"the answer is over 1 "
			 "MiB: ask for fewer rows (top)\"}");
		reply_tool(id, msg, strlen(msg), 1);
	} else {
		/* the command's own message, as a JSON object */
		char *m = NULL;
		size_t mn = 0;
		FILE *f = open_memstream(&m, &mn);

		if (f) {
			fputs("{\"error\":", f);
			jstr(f, err && en ? err : "the command failed",
			     err && en ? en : 18);
			fputs("}", f);
			fclose(f);
		}
		if (m)
			reply_tool(id, m, mn, 1);
		else
			reply_error(id, -32603, "out of memory");
		free(m);
	}
	free(out);
	free(err);
}

static void call_tool(struct serve_state *st, int ndumps,
		      const struct mj *id, const struct mj *params)
{
	const struct mj *name = mj_get(params, "name");
	const struct mj *args = mj_get(params, "arguments");
	const struct tool *t;
	struct argreq a;
	struct serve_resp resp = { 0, NULL, 0, NULL, NULL };
	char msg[160];

	if (!name || name->t != MJ_STR)
		return reply_error(id, -32602, "tools/call: params.name, a tool's name");
	if (args && args->t != MJ_OBJ)
		return reply_error(id, -32602, "tools/call: params.arguments is an object");
	for (t = tools; t->name; t++)
		if (strcmp(t->name, name->s) == 0)
			break;
	if (!t->name) {
		snprintf(msg, sizeof(msg), "no tool '%.60s' (tools/list names them)",
			 name->s);
		return reply_error(id, -32602, msg);
	}
	if (ndumps < t->dumps) {
		snprintf(msg, sizeof(msg), "{\"error\":\"%s needs two or three "
			 "dumps: heapdump mcp BEFORE AFTER [LATER]\"}", t->name);
		return reply_tool(id, msg, strlen(msg), 1);
	}
	if (t->cmd)
		return call_cli(t, id, args);
	if (!t->api)
		return call_sql(st, id, args);
	memset(&a, 0, sizeof(a));
	a.r.path = t->api;
	a.r.arg = arg_of;
	a.args = args;
	serve_api(st, &a.r, &resp);
	if (!resp.body)
		reply_error(id, -32603, "out of memory");
	else
		reply_tool(id, resp.body, resp.len, resp.status != 200);
	free(resp.body);
}

static void list_tools(int ndumps, const struct mj *id)
{
	const struct tool *t;
	int first = 1;

	reply_head(id);
	fputs(",\"result\":{\"tools\":[", stdout);
	for (t = tools; t->name; t++) {
		if (ndumps < t->dumps)
			continue;
		printf("%s{\"name\":\"%s\",\"description\":", first ? "" : ",",
		       t->name);
		jstr(stdout, t->desc, strlen(t->desc));
		printf(",\"inputSchema\":{\"type\":\"object\",\"properties\":%s,"
		       "\"additionalProperties\":false},"
		       "\"annotations\":{\"readOnlyHint\":true}}",
		       t->schema);
		first = 0;
	}
	fputs("]}}\n", stdout);
	fflush(stdout);
}

static void initialize(const struct mj *id, const struct mj *params)
{
	const struct mj *v = mj_get(params, "protocolVersion");
	const char *use = MCP_LATEST;
	int i;

	for (i = 0; v && v->t == MJ_STR && versions[i]; i++)
		if (strcmp(v->s, versions[i]) == 0)
			use = versions[i];
	reply_head(id);
	printf(",\"result\":{\"protocolVersion\":\"%s\","
	       "\"capabilities\":{\"tools\":{\"listChanged\":false}},"
	       "\"serverInfo\":{\"name\":\"heapdump\",\"version\":\"%s\"},"
	       "\"instructions\":",
	       use, hd_version());
	{
		static const char ins[] =
			"Tools over a Ruby heap dump (or two or three dumps of "
			"one process: a leak hunt). Start with overview; with "
			"several dumps, leaks gives the verdict, the holders and "
			"their paths; object shows one object's path, references "
			"and referrers. Answers are JSON, paged by offset and "
			"limit (at most 1000).";

		jstr(stdout, ins, sizeof(ins) - 1);
	}
	fputs("}}\n", stdout);
	fflush(stdout);
}

/* One line of the client's. */
static void handle(struct serve_state *st, int ndumps, const char *line,
		   size_t n)
{
	struct mj req;
	const char *why = NULL;
	const struct mj *id, *method, *params, *ver;
	int rc = mj_parse(&req, line, n, &why);

	if (rc) {
		char msg[128];

		snprintf(msg, sizeof(msg), "parse error: %s", why);
		reply_error(NULL, rc == -2 ? -32603 : -32700, msg);
		return;
	}
	id = mj_get(&req, "id");
	method = mj_get(&req, "method");
	params = mj_get(&req, "params");
	ver = mj_get(&req, "jsonrpc");
	if (id && id->t != MJ_STR && id->t != MJ_NUM && id->t != MJ_NULL)
		id = NULL;
	if (req.t != MJ_OBJ || !ver || ver->t != MJ_STR ||
	    strcmp(ver->s, "2.0") != 0 || !method || method->t != MJ_STR ||
	    (params && params->t != MJ_OBJ && params->t != MJ_ARR)) {
		/* a response of the client's (no method) needs no answer */
		if (!(req.t == MJ_OBJ && !method && id))
			reply_error(id, -32600, "invalid request: a JSON-RPC 2.0 "
				    "object with a method");
		goto out;
	}
	if (!id) /* a notification: no answer, whatever it is */
		goto out;
	if (strcmp(method->s, "initialize") == 0)
		initialize(id, params);
	else if (strcmp(method->s, "ping") == 0) {
		reply_head(id);
		fputs(",\"result\":{}}\n", stdout);
		fflush(stdout);
	} else if (strcmp(method->s, "tools/list") == 0)
		list_tools(ndumps, id);
	else if (strcmp(method->s, "tools/call") == 0)
		call_tool(st, ndumps, id, params);
	else
		reply_error(id, -32601, "no such method: initialize, ping, "
			    "tools/list, tools/call");
out:
	mj_free(&req);
}

int cmd_mcp(int argc, char **argv)
{
	struct serve_state *st = NULL;
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int rc, first, n;

	memset(&A, 0, sizeof(A));
	if ((rc = cli_parse(&info, argc, argv, &first)))
		return rc < 0 ? EXIT_OK : rc;
	argc = cli_skip_sidecars(argc, argv, first);
	n = argc - first;
	if (n < 1 || n > 3)
		return cli_usage_error(&info, n < 1 ? "a dump or store is needed"
						    : "at most three dumps "
						      "(BEFORE AFTER [LATER])");
	if ((rc = serve_state_open(&st, argv + first, n, 1, A.no_cache)))
		return rc;
	g_dumps = argv + first;
	g_ndumps = n;
	{
		ssize_t k = readlink("/proc/self/exe", g_self, sizeof(g_self) - 1);

		if (k <= 0 || (size_t)k >= sizeof(g_self) - 1) {
			cli_error("mcp: cannot find this program's file");
			serve_state_free(st);
			return EXIT_FAIL;
		}
		g_self[k] = 0;
	}
	while ((len = getline(&line, &cap, stdin)) > 0) {
		while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			len--;
		if (!len)
			continue;
		if ((size_t)len > MCP_MAX_LINE) {
			reply_error(NULL, -32600, "request too large (1 MiB at most)");
			continue;
		}
		handle(st, n, line, (size_t)len);
	}
	free(line);
	serve_state_free(st);
	return EXIT_OK;
}
