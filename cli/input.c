/*
 * input.c - the inputs of a command: set up (cli_input_init), spooled
 * when read twice from a pipe, opened as a store, a store's source dump,
 * and the registry of every file read, which no output may replace
 * (cli_out_check).
 */
#include "common.h"
#include "opt.h"

#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void cli_input_init(struct cli_input *in, const char *path, int strict,
		    int quiet)
{
	memset(in, 0, sizeof(*in));
	in->path = path;
	in->name = strcmp(path, "-") == 0 ? "(stdin)" : path;
	in->strict = strict;
	in->quiet = quiet;
	in->progress = !quiet && isatty(2);
	in->t0 = cli_now();
	cli_input_register(path);
}

/* The spooled copies of standard input and of pipes, removed at exit
 * (diff reads up to three inputs) or by the signal handler. */
#define MAX_SPOOL 3
static hd_spool *spools[MAX_SPOOL];
static int nspool, stdin_spooled;

static void free_spools(void)
{
	int i;

	for (i = 0; i < nspool; i++)
		hd_spool_free(spools[i]);
}

int cli_spool_stdin(struct cli_input *in)
{
	const char *what = "standard input";
	hd_error err = { 0 };
	struct stat sb;
	int rc, src = 0;

	if (strcmp(in->path, "-") == 0) {
		if (stdin_spooled)
			return 0;
	} else if (stat(in->path, &sb) != 0 || S_ISREG(sb.st_mode) ||
		   S_ISDIR(sb.st_mode)) {
		return 0; /* read twice in place (or an error later) */
	} else {
		/* a pipe (named, or <(...)) can be read only once */
		what = in->path;
	}
	if (nspool == MAX_SPOOL) {
		cli_error("at most %d inputs can be pipes", MAX_SPOOL);
		return EXIT_USAGE;
	}
	if (what != in->path)
		stdin_spooled = 1;
	else if ((src = open(in->path, O_RDONLY | O_CLOEXEC)) < 0) {
		cli_error("cannot open '%s': %s", in->path, strerror(errno));
		return EXIT_FAIL;
	}
	rc = hd_spool_new(&spools[nspool], src, what, &err);
	if (src > 0)
		close(src);
	if (rc)
		return cli_lib_error(&err);
	if (!nspool++)
		atexit(free_spools);
	in->path = hd_spool_path(spools[nspool - 1]);
	return 0;
}

/* The dump a store was indexed from is an input too. */
static void register_source(const hd_store *s)
{
	hd_store_info si;

	hd_store_info_get(&si, s);
	if (si.source_path && *si.source_path)
		cli_input_register(si.source_path);
}

int cli_open_store(struct cli_input *in, hd_store **out)
{
	hd_index_options o = cli_input_index_options(in);
	hd_error err = { 0 };
	int rc;

	rc = hd_store_load(out, in->path, &o, &err);
	cli_input_done(in);
	if (rc)
		return cli_lib_error(&err);
	register_source(*out);
	return 0;
}

int cli_open_store_cached(struct cli_input *in, hd_store **out,
			  unsigned flags, hd_cache_result *res)
{
	hd_cache_options o = HD_CACHE_OPTIONS_INIT;
	hd_error err = { 0 };
	int rc;

	o.index = cli_input_index_options(in);
	o.flags = flags;
	rc = hd_store_open_cached(out, res, in->path, &o, &err);
	cli_input_done(in);
	if (rc)
		return cli_lib_error(&err);
	if (res->path[0])
		cli_input_register(res->path);
	register_source(*out);
	return 0;
}

int cli_store_on_disk(const hd_store *s, const char *name, const char *what)
{
	hd_store_info si;

	hd_store_info_get(&si, s);
	if (si.source_path && *si.source_path &&
	    strcmp(si.source_path, "-") != 0)
		return 0;
	cli_error("'%s' was indexed from standard input: its %s", name, what);
	return EXIT_FAIL;
}

int cli_store_source(const char *store_path, char **dump_out)
{
	hd_store *s = NULL;
	hd_store_info si;
	hd_error err = { 0 };
	int rc;

	*dump_out = NULL;
	if ((rc = hd_store_open(&s, store_path, &err)))
		return cli_lib_error(&err);
	hd_store_info_get(&si, s);
	cli_input_register(store_path);
	register_source(s);
	if ((rc = cli_store_on_disk(s, store_path, "records are not on disk")))
		; /* said */
	else if ((rc = hd_store_check_source(s, si.source_path, &err)))
		rc = cli_lib_error(&err);
	else if (!(*dump_out = strdup(si.source_path))) {
		cli_error("out of memory");
		rc = EXIT_FAIL;
	}
	hd_store_close(s);
	return rc;
}

/* Every file the command reads: no output may be one of them. */
#define MAX_INPUTS 32
static struct {
	dev_t dev;
	ino_t ino;
	char name[256];
} inputs[MAX_INPUTS];
static int ninputs;

void cli_input_register(const char *path)
{
	struct stat sb;

	/* a terminal or /dev/null as both input and output harms nothing */
	if (!path || strcmp(path, "-") == 0 || ninputs == MAX_INPUTS ||
	    stat(path, &sb) != 0 || S_ISDIR(sb.st_mode) || S_ISCHR(sb.st_mode))
		return;
	inputs[ninputs].dev = sb.st_dev;
	inputs[ninputs].ino = sb.st_ino;
	snprintf(inputs[ninputs].name, sizeof(inputs[0].name), "%s", path);
	ninputs++;
}

int cli_out_check(const char *path)
{
	struct stat sb;
	int i;

	if (!path || strcmp(path, "-") == 0 || stat(path, &sb) != 0)
		return 0;
	for (i = 0; i < ninputs; i++) {
		if (inputs[i].dev != sb.st_dev || inputs[i].ino != sb.st_ino)
			continue;
		if (strcmp(inputs[i].name, path) == 0)
			cli_error("'%s' is the input: choose another output",
				  path);
		else
			cli_error("'%s' is the input '%s': choose another "
				  "output", path, inputs[i].name);
		return EXIT_USAGE;
	}
	return 0;
}

int cli_jobs(const struct cli_cmd_info *info, unsigned long long given,
	     unsigned *out)
{
	const char *env = getenv("HEAPDUMP_JOBS");
	char *end;
	unsigned long long v;
	long cpus;

	if (given != ULLONG_MAX) {
		if (!given || given > 64)
			return cli_usage_error(info, "-j wants 1 to 64 threads");
		*out = (unsigned)given;
		return 0;
	}
	if (env && *env) {
		errno = 0;
		v = strtoull(env, &end, 10);
		if (errno || *end || !v || v > 64 || *env == '-')
			return cli_usage_error(info, "HEAPDUMP_JOBS wants 1 to "
						     "64 threads, not '%s'",
					       env);
		*out = (unsigned)v;
		return 0;
	}
	cpus = sysconf(_SC_NPROCESSORS_ONLN);
	*out = cpus < 1 ? 1 : cpus > 64 ? 64 : (unsigned)cpus;
	return 0;
}

/* Streams a dump (not a store) into st, on in->jobs threads for a plain
 * file, with progress and the problem summary. Returns 0 or an exit
 * code. */
int cli_stats_feed(hd_stats *st, struct cli_input *in, const char *cmd)
{
	hd_scan_options so = HD_SCAN_OPTIONS_INIT;
	hd_error err = { 0 };
	int rc;

	so.jobs = in->jobs;
	so.read = cli_input_read_options(in);
	so.progress = cli_progress;
	so.progress_payload = in;
	rc = hd_stats_add_dump(st, in->path, &so, NULL, &err);
	/* the reader's words for a store's bytes on standard input */
	if (rc == HD_ENOTDUMP && strcmp(in->path, "-") == 0 &&
	    strcmp(err.msg, "(stdin): not a heap dump but a heapdump "
			    "store") == 0) {
		cli_input_done(in);
		cli_lib_error(&err);
		cli_error("a store is read from its path: heapdump "
			  "%s STORE", cmd);
		return EXIT_FAIL;
	}
	cli_input_done(in);
	return rc ? cli_lib_error(&err) : 0;
}
