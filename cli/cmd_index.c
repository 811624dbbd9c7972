/*
 * cmd_index.c - heapdump index: build the graph store of a dump, so that
 * later commands open it in milliseconds instead of re-reading the dump.
 */
#include "cmd.h"
#include "common.h"
#include "opt.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define COMMAND_NAME "index"

static const char *out_path;
static int strict, quiet, dominators, skip_weak, views;
static unsigned long long jobs_given;

static const struct cli_opt opts[] = {
	OPT_STRING('o', "output", "STORE", &out_path,
		   "where to write the store (default: DUMP.hds)"),
	OPT_FLAG(0, "dominators", &dominators,
		 "also compute and keep the dominator tree (top, dominators "
		 "and leaks then read it instead of computing it)"),
	OPT_FLAG(0, "views", &views,
		 "also keep what serve reads at start (man 5 heapdump-store, "
		 "VIEWS): the group stats, the string values (kept as the dump "
		 "is read) and, with --dominators, retained by class"),
	OPT_FLAG(0, "skip-weak", &skip_weak,
		 "with --dominators: weak references keep nothing alive"),
	OPT_UINT('j', "jobs", "N", &jobs_given,
		 "threads reading a plain dump file (default: $HEAPDUMP_JOBS, "
		 "else the CPUs); the store is the same"),
	OPT_FLAG(0, "strict", &strict, "fail at the first invalid line"),
	OPT_FLAG('q', "quiet", &quiet, "no progress meter and no summary line (problems in the dump are still reported)"),
	OPT_END()
};

static const struct cli_cmd_info info = {
	COMMAND_NAME, "[options] DUMP",
	"Read a heap dump and write its graph store (man 5 heapdump-store):\n"
	"dense node ids, columns, interned strings, edges both ways, roots.\n"
	"The store is written atomically: a temporary file, then a rename\n"
	"(a device or FIFO is written in place, a symbolic link followed).",
	opts
};

/* The directory the store's sections wait in while the tree and the
 * views are computed (HD_INDEX_SPILL): the store's own, where its file
 * will be; NULL (the system's) for a store written to a device. */
static char *spill_dir(void)
{
	const char *slash = strrchr(out_path, '/');
	struct stat sb;
	char *d;

	if (stat(out_path, &sb) == 0 && !S_ISREG(sb.st_mode))
		return NULL;
	if (!slash)
		return strdup(".");
	if (slash == out_path)
		return strdup("/");
	if ((d = malloc((size_t)(slash - out_path) + 1))) {
		memcpy(d, out_path, (size_t)(slash - out_path));
		d[slash - out_path] = '\0';
	}
	return d;
}

/* The tree (--dominators) and the views (--views) kept in s. The string
 * values and the group stats first, before the tree's sections and the
 * tree itself are held; the tree given to the store then read back from
 * it (no second copy) for retained by class. The sections written are
 * the same in any order. */
static int add_dominators(hd_store *s, hd_error *err)
{
	unsigned flags = HD_DOMTREE_SKIP_DUMPER |
			 (skip_weak ? HD_ROOTS_SKIP_WEAK : 0);
	hd_domtree *d = NULL;
	int rc = 0;

	if (views && (rc = hd_store_set_views(s, NULL, HD_VIEW_STRINGS |
					      HD_VIEW_GROUPS, err)))
		return rc;
	if (!dominators)
		return 0;
	/* what top and dominators read by default: without the tracer */
	if ((rc = hd_domtree_new(&d, s, flags, err)))
		return rc;
	rc = hd_store_set_domtree(s, d, err);
	hd_domtree_free(d);
	d = NULL;
	/* retained by class for serve's tree alone (without the tracer,
	 * weak references keeping their objects) */
	if (!rc && views && !skip_weak &&
	    !(rc = hd_domtree_new(&d, s, flags, err)))
		rc = hd_store_set_views(s, d, HD_VIEW_CLASSES |
					       HD_VIEW_ORDER, err);
	hd_domtree_free(d);
	return rc;
}

int cmd_index(int argc, char **argv)
{
	struct cli_input in;
	hd_index_options o;
	hd_store_info si;
	hd_store *s = NULL;
	hd_error err = { 0 };
	struct stat sb;
	char *def = NULL, *dir = NULL, a[32], b[32];
	double t0 = cli_now();
	unsigned jobs;
	int rc, first;

	out_path = NULL;
	strict = quiet = dominators = skip_weak = views = 0;
	jobs_given = ULLONG_MAX; /* not given */
	if ((rc = cli_parse(&info, argc, argv, &first)))
		return rc < 0 ? EXIT_OK : rc;
	if ((rc = cli_jobs(&info, jobs_given, &jobs)))
		return rc;
	if (argc - first != 1)
		return cli_usage_error(&info, "which dump?");
	if (skip_weak && !dominators)
		return cli_usage_error(&info, "--skip-weak goes with "
					      "--dominators");
	if (!out_path) {
		if (strcmp(argv[first], "-") == 0)
			return cli_usage_error(&info,
					       "reading stdin: name the store with -o");
		def = malloc(strlen(argv[first]) + 5);
		if (!def) {
			cli_error("out of memory");
			return EXIT_FAIL;
		}
		sprintf(def, "%s.hds", argv[first]);
		out_path = def;
	}
	if (hd_store_is_store(argv[first])) {
		cli_error("'%s' is already a store", argv[first]);
		rc = EXIT_USAGE;
		goto out;
	}
	cli_input_init(&in, argv[first], strict, quiet);
	if ((rc = cli_out_check(out_path)))
		goto out;
	o = cli_input_index_options(&in);
	o.jobs = jobs;
	/* the string values kept as the dump is read: not read back */
	if (views)
		o.flags |= HD_INDEX_STRING_VALUES;
	/* the columns out of memory while the tree and the views are
	 * computed: what each step reads comes back, the rest stays out,
	 * and index's peak is the build's or one step's, not the whole
	 * store's with the tree's work beside it */
	if (dominators || views) {
		o.flags |= HD_INDEX_SPILL;
		o.spill_dir = dir = spill_dir();
	}
	rc = hd_store_build(&s, in.path, &o, &err);
	cli_input_done(&in);
	if (!rc && (dominators || views))
		rc = add_dominators(s, &err);
	if (rc || (rc = hd_store_write(s, out_path, &err))) {
		rc = cli_lib_error(&err);
		goto out;
	}
	if (!quiet) {
		uint64_t size = stat(out_path, &sb) == 0 ? (uint64_t)sb.st_size : 0;
		char c1[32], c2[32], c3[32], c4[32];

		hd_store_info_get(&si, s);
		fprintf(stderr, "%s: ", PROGRAM_NAME);
		cli_text_string(stderr, out_path, strlen(out_path));
		fprintf(stderr,
			": %s objects, %s references (%s dangling), "
			"%s duplicate addresses; store %s, %s of the dump, "
			"in %.2fs\n",
			cli_commas(si.nodes, c1, sizeof(c1)),
			cli_commas(si.edges, c2, sizeof(c2)),
			cli_commas(si.dangling, c3, sizeof(c3)),
			cli_commas(si.duplicates, c4, sizeof(c4)),
			cli_human_bytes(size, a, sizeof(a)),
			si.source_size ? (snprintf(b, sizeof(b), "%.0f%%",
						   100.0 * (double)size /
							   (double)si.source_size),
					  b) :
					 "?",
			cli_now() - t0);
	}
out:
	hd_store_close(s);
	free(def);
	free(dir);
	return rc;
}
