/*
 * cmd_flame.c - heapdump flame DUMP | BEFORE AFTER [LATER]: the heap as
 * a flame graph (folded stacks, speedscope JSON or pprof), by retention
 * path, allocation site or allocation stack; with two or three dumps,
 * of the growth alone. The library builds and writes it (hd_flame_build,
 * hd_flame_write); this file parses, opens and picks the objects.
 */
#include "cmd.h"
#include "common.h"
#include "opt.h"
#include "order.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define COMMAND_NAME "flame"

static struct flame_args {
	const char *by, *metric, *format, *output;
	unsigned long long depth;
	int all, skip_weak, no_generation, force, strict, quiet;
} A;

static const struct cli_opt opts[] = {
	OPT_STRING(0, "by", "SOURCE", &A.by,
		   "path (default: retention paths, the dominator tree), "
		   "site (the allocation file:line) or stack (the "
		   "allocation stack)"),
	OPT_STRING('m', "metric", "M", &A.metric,
		   "memsize (default), count or retained"),
	OPT_STRING('f', "format", "FMT", &A.format,
		   "folded (default: flamegraph.pl, inferno), speedscope or "
		   "pprof (gzip'd profile.proto)"),
	OPT_STRING('o', "output", "FILE", &A.output,
		   "write to FILE (default: standard output)"),
	OPT_UINT(0, "depth", "N", &A.depth,
		 "frames below N fold into one \"(deeper)\" frame (default "
		 "128)"),
	OPT_FLAG('a', "all", &A.all,
		 "keep the allocation tracer and dump_all's own objects"),
	OPT_FLAG(0, "skip-weak", &A.skip_weak,
		 "weak references (WeakMap, WeakRef) keep nothing alive"),
	OPT_FLAG(0, "no-generation", &A.no_generation,
		 "with two or three dumps: identity by address and "
		 "fingerprint"),
	OPT_FLAG(0, "force", &A.force,
		 "compare dumps that seem to be in the wrong order"),
	OPT_FLAG(0, "strict", &A.strict, "fail at the first invalid line"),
	OPT_FLAG('q', "quiet", &A.quiet, "no progress meter"),
	OPT_END()
};

static const struct cli_cmd_info info = {
	COMMAND_NAME, "[options] DUMP|STORE | BEFORE AFTER [LATER]",
	"The heap as a flame graph. --by path (the default) stacks each\n"
	"object under the objects that alone keep it alive (the dominator\n"
	"tree), so a frame's width is the retained size of its objects;\n"
	"--by site gives the allocation site as a one-frame stack; --by\n"
	"stack the allocation stack the gem recorded. With two dumps, only\n"
	"the objects new in AFTER; with three, those of them still alive in\n"
	"LATER (as LATER has them).",
	opts
};

static int parse_word(const char *v, const char *const *names, int n,
		      const char *opt, int *out)
{
	int i;

	for (i = 0; i < n; i++)
		if (strcmp(v, names[i]) == 0) {
			*out = i + 1;
			return 0;
		}
	return cli_usage_error(&info, "%s takes %s, %s or %s, not '%s'", opt,
			       names[0], names[1], names[2], v);
}

static int parse_args(hd_flame_options *fo, int *fmt)
{
	static const char *const by[] = { "path", "site", "stack" };
	static const char *const metric[] = { "count", "memsize",
					      "retained" };
	static const char *const format[] = { "folded", "speedscope",
					      "pprof" };
	int rc;

	if ((A.by && (rc = parse_word(A.by, by, 3, "--by", &fo->by))) ||
	    (A.metric && (rc = parse_word(A.metric, metric, 3, "--metric",
					  &fo->metric))) ||
	    (A.format && (rc = parse_word(A.format, format, 3, "--format",
					  fmt))))
		return rc;
	if (A.depth > 100000)
		return cli_usage_error(&info, "--depth takes 1 to 100000");
	fo->max_depth = (uint32_t)A.depth;
	fo->flags = (A.all ? HD_FLAME_ALL : 0) |
		    (A.skip_weak ? HD_ROOTS_SKIP_WEAK : 0);
	if (*fmt == HD_FLAME_PPROF && (!A.output || !strcmp(A.output, "-")) &&
	    isatty(STDOUT_FILENO))
		return cli_usage_error(&info, "pprof is gzip'd binary: write "
					      "it to a file (-o FILE)");
	return 0;
}

static int write_bytes(const void *buf, size_t n, void *payload)
{
	return fwrite(buf, 1, n, payload) == n ? 0 : 1;
}

static int write_out(const hd_flame *f, int fmt, int metric, const char *name,
		     const char *like)
{
	struct cli_out o;
	hd_error err = { 0 };
	int rc;

	if ((rc = cli_out_open(&o, A.output, like)))
		return rc;
	errno = 0;
	rc = hd_flame_write(f, fmt, name, metric, write_bytes, o.f, &err);
	if (rc) {
		int e = errno ? errno : EIO;

		cli_out_abort(&o);
		if (rc > 0) {
			cli_error("cannot write '%s': %s",
				  A.output ? A.output : "standard output",
				  strerror(e));
			return EXIT_FAIL;
		}
		return cli_lib_error(&err);
	}
	return cli_out_commit(&o);
}

/* The growth: the diff's new objects of AFTER, or with LATER the
 * retained ones as LATER has them; *at the store they belong to. */
static int growth(hd_diff_result **d, hd_store **s, int nin, int *at)
{
	hd_diff_options dopt = HD_DIFF_OPTIONS_INIT;
	hd_error err = { 0 };

	dopt.flags = (A.no_generation ? HD_DIFF_NO_GENERATION : 0) |
		     (A.all ? HD_DIFF_ALL : 0);
	dopt.read.flags = A.strict ? HD_READ_STRICT : 0;
	if (hd_diff(d, s[0], s[1], nin == 3 ? s[2] : NULL, &dopt, &err))
		return cli_lib_error(&err);
	*at = (*d)->has_later ? 2 : 1;
	return 0;
}

static const char *profile_name(const hd_flame_options *fo, int nin)
{
	static const char *const names[3][3] = {
		{ "retention paths (dominator tree)",
		  "allocation sites (one frame: the site, not a stack)",
		  "allocation stacks" },
		{ "growth by retention path (dominator tree)",
		  "growth by allocation site (one frame: the site, not a "
		  "stack)",
		  "growth by allocation stack" },
		{ "retained growth by retention path (dominator tree)",
		  "retained growth by allocation site (one frame: the site, "
		  "not a stack)",
		  "retained growth by allocation stack" },
	};

	return names[nin - 1][fo->by - 1];
}

/* An empty graph is an answer (nothing grew), but never a silent one. */
static void say_empty(const struct cli_input *in, const hd_store *s,
		      const hd_flame_options *fo, int nin,
		      const hd_diff_result *d)
{
	hd_store_info si;

	if (nin > 1 && !(d->has_later ? d->retained.n : d->added.n)) {
		cli_error("%s: the graph is empty: no object is new%s",
			  in->name, d->has_later ? " and still alive" : "");
		return;
	}
	hd_store_info_get(&si, s);
	cli_error("%s: the graph is empty: %s", in->name,
		  fo->by == HD_FLAME_BY_PATH ?
			  (si.features & HD_FEAT_PARTIAL ?
				   "no object is reached from a GC root (no "
				   "ROOT lines: a partial dump; --by site "
				   "counts every object)" :
				   "no object is reached from a GC root") :
			  "no object weighs anything");
}

int cmd_flame(int argc, char **argv)
{
	hd_flame_options fo = HD_FLAME_OPTIONS_INIT;
	struct cli_input in[3];
	hd_store *s[3] = { NULL, NULL, NULL };
	hd_diff_result *d = NULL;
	hd_flame *f = NULL;
	hd_error err = { 0 };
	int rc, first, nin, k, at = 0, fmt = HD_FLAME_FOLDED, nstdin = 0;

	memset(&A, 0, sizeof(A));
	if ((rc = cli_parse(&info, argc, argv, &first)))
		return rc < 0 ? EXIT_OK : rc;
	nin = argc - first;
	if (nin < 1 || nin > 3)
		return cli_usage_error(&info, "one dump, or BEFORE AFTER "
					      "[LATER]");
	for (k = 0; k < nin; k++)
		nstdin += strcmp(argv[first + k], "-") == 0;
	if (nstdin > 1)
		return cli_usage_error(&info, "only one input can be '-'");
	if ((rc = parse_args(&fo, &fmt)))
		return rc;
	for (k = 0; k < nin; k++)
		cli_input_register(argv[first + k]);
	if ((rc = cli_out_check(A.output)))
		return rc;
	for (k = 0; k < nin; k++) {
		cli_input_init(&in[k], argv[first + k], A.strict, A.quiet);
		if ((nin > 1 && (rc = cli_spool_stdin(&in[k]))) ||
		    (rc = cli_open_store(&in[k], &s[k])))
			goto out;
	}
	if (nin > 1 && ((rc = cli_check_order(s, in, (size_t)nin, A.force)) ||
			(rc = growth(&d, s, nin, &at))))
		goto out;
	/* --by stack: the store's allocation stacks (none: the library
	 * says so) */
	if (fo.by == HD_FLAME_BY_STACK && hd_store_stack_count(s[at])) {
		fo.stack = hd_store_flame_stack;
		fo.stack_ctx = s[at];
	}
	if (hd_flame_build(&f, s[at], d ? (d->has_later ? &d->retained_later :
							  &d->added) :
					  NULL,
			   &fo, &err)) {
		if (err.code == HD_ENOTFOUND)
			cli_error("%s: %s", in[at].name, err.msg);
		rc = err.code == HD_ENOTFOUND ? EXIT_FAIL : cli_lib_error(&err);
		goto out;
	}
	if (!hd_flame_total(f, NULL))
		say_empty(&in[at], s[at], &fo, nin, d);
	rc = write_out(f, fmt, fo.metric, profile_name(&fo, nin),
		       in[at].path);
out:
	hd_flame_free(f);
	hd_diff_result_free(d);
	for (k = 0; k < 3; k++)
		hd_store_close(s[k]);
	return rc;
}
