/*
 * cmd_malloc.c - heapdump malloc: native allocations by site.
 *
 *   heapdump malloc [-o DIR] [--every S] [--leaks] [--signal SIG] -- CMD...
 * runs CMD under the malloc tracker (LD_PRELOAD=libheapdump-malloc.so,
 * its environment: man 5 heapdump-malloc), forwards the signals sent to
 * heapdump, exits with CMD's status and lists the snapshots written.
 *
 *   heapdump malloc [-f FMT] [-n N] [--dump DUMP] SNAP...
 * reports snapshots of one process: what lib/mreport.c computes (sites
 * by live bytes or growth, mwrap's estimates, slopes, the join with a
 * heap dump, the leak scan, the verdict), printed as text, JSON, TSV or
 * NDJSON. Only parsing and printing here.
 */
#include "cmd.h"
#include "common.h"
#include "opt.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define COMMAND_NAME "malloc"
#define LIB_NAME "libheapdump-malloc.so"

static struct malloc_args {
	const char *dir, *every, *signal, *format, *dump;
	unsigned long long top, min_growth;
	int leaks, strict, quiet, has_min_growth;
} A;

static const char *set_min_growth(const char *arg, void *target)
{
	char *end;

	errno = 0;
	((struct malloc_args *)target)->min_growth = strtoull(arg, &end, 10);
	if (errno || end == arg || *end || *arg == '-')
		return "--min-growth takes a number of bytes";
	((struct malloc_args *)target)->has_min_growth = 1;
	return NULL;
}

static const struct cli_opt opts[] = {
	OPT_STRING('o', "output", "DIR", &A.dir,
		   "run: write the snapshots into DIR (default: $TMPDIR or "
		   "/tmp)"),
	OPT_STRING(0, "every", "SECONDS", &A.every,
		   "run: a snapshot every SECONDS too"),
	OPT_FLAG(0, "leaks", &A.leaks,
		 "run: each snapshot also scans for unreached blocks"),
	OPT_STRING(0, "signal", "SIG", &A.signal,
		   "run: the signal that asks a snapshot (default USR2, "
		   "none: no signal)"),
	OPT_STRING('f', "format", "FMT", &A.format,
		   "text (default), json, tsv or ndjson"),
	OPT_UINT('n', "top", "N", &A.top, "sites shown (default 20, 0: all)"),
	OPT_STRING(0, "dump", "DUMP", &A.dump,
		   "join with a traced heap dump (or store) of the process "
		   "by file:line"),
	OPT_CALLBACK(0, "min-growth", "BYTES", &A, set_min_growth,
		     "growth under which a site is flat (default 1000000)"),
	OPT_FLAG(0, "strict", &A.strict,
		 "fail at the first damaged snapshot line"),
	OPT_FLAG('q', "quiet", &A.quiet, "no notes on standard error"),
	OPT_END()
};

static const struct cli_cmd_info info = {
	COMMAND_NAME, "[options] -- COMMAND [ARG...] | [options] SNAP...",
	"Native (malloc) memory by Ruby line or C caller. With -- COMMAND:\n"
	"run it under the malloc tracker and list the snapshots it writes.\n"
	"With snapshots: the sites by live bytes, their growth and slope\n"
	"over several snapshots of one process, and a verdict.",
	opts
};

/* ==================================================================== */
/* run: heapdump malloc -- CMD                                           */
/* ==================================================================== */

static volatile sig_atomic_t child_pid;

/* a signal sent to heapdump (kill, not the terminal: the terminal's
 * reaches the child in our process group already) goes to the child */
static void forward(int sig, siginfo_t *si, void *ctx)
{
	(void)ctx;
	if (child_pid > 0 && (!si || si->si_code <= 0))
		kill((pid_t)child_pid, sig);
}

static const int forwarded[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT,
				 SIGUSR1, SIGUSR2, SIGWINCH, SIGCONT };

static void forward_signals(void)
{
	struct sigaction sa;
	size_t i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = forward;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof(forwarded) / sizeof(forwarded[0]); i++)
		sigaction(forwarded[i], &sa, NULL);
}

static int readable(const char *path)
{
	return access(path, R_OK) == 0;
}

/* The tracker: $HEAPDUMP_MALLOC_LIBRARY, else the install's
 * (BINDIR/../lib/heapdump/), else the build directory's (beside the
 * program, or in its preload/). 0, or 1 after saying what to build. */
static int find_library(char *out, size_t size)
{
	const char *env = getenv("HEAPDUMP_MALLOC_LIBRARY");
	static const char *const rel[] = { "/../lib/heapdump/" LIB_NAME,
					   "/" LIB_NAME, "/preload/" LIB_NAME };
	char dir[PATH_MAX];
	ssize_t n;
	size_t i;
	char *slash;

	if (env && *env) {
		if (!readable(env)) {
			cli_error("HEAPDUMP_MALLOC_LIBRARY names '%s': %s", env,
				  strerror(errno));
			return 1;
		}
		if (!realpath(env, out)) {
			cli_error("cannot resolve '%s': %s", env,
				  strerror(errno));
			return 1;
		}
		return 0;
	}
	n = readlink("/proc/self/exe", dir, sizeof(dir) - 1);
	if (n > 0) {
		dir[n] = '\0';
		if ((slash = strrchr(dir, '/')))
			*slash = '\0';
		for (i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
			if ((size_t)snprintf(out, size, "%s%s", dir, rel[i]) >=
			    size)
				continue;
			if (readable(out))
				return 0;
		}
	}
	cli_error("the malloc tracker %s is missing: build it (make, which "
		  "builds it beside the heapdump program; make install puts "
		  "it in LIBDIR/heapdump/), or name it in "
		  "HEAPDUMP_MALLOC_LIBRARY", LIB_NAME);
	return 1;
}

static int set_env(const char *name, const char *value)
{
	if (setenv(name, value, 1) == 0)
		return 0;
	cli_error("cannot set %s: %s", name, strerror(errno));
	return 1;
}

/* the environment of the tracker (man 5 heapdump-malloc) */
static int tracker_env(const char *lib, const char *dir)
{
	const char *pre = getenv("LD_PRELOAD");
	char *v;
	size_t n;
	int rc;

	n = strlen(lib) + (pre ? strlen(pre) : 0) + 2;
	if (!(v = malloc(n))) {
		cli_error("out of memory");
		return 1;
	}
	/* ours first: another allocator after it is wrapped, one ahead
	 * of it would leave it blind (it says so in its snapshots) */
	snprintf(v, n, "%s%s%s", lib, pre && *pre ? ":" : "",
		 pre ? pre : "");
	rc = set_env("LD_PRELOAD", v) || set_env("HEAPDUMP_MALLOC_DIR", dir) ||
	     set_env("HEAPDUMP_MALLOC_AT_EXIT", "1") ||
	     (A.every && set_env("HEAPDUMP_MALLOC_EVERY", A.every)) ||
	     (A.leaks && set_env("HEAPDUMP_MALLOC_LEAKS", "1")) ||
	     (A.signal && set_env("HEAPDUMP_MALLOC_SIGNAL", A.signal));
	free(v);
	return rc;
}

static int check_run_args(void)
{
	char *end;
	double d;

	if (A.format || A.dump || A.top != ULLONG_MAX || A.has_min_growth ||
	    A.strict)
		return cli_usage_error(&info, "-f, --top, --dump, --min-growth "
					      "and --strict report snapshots: "
					      "not with -- COMMAND");
	if (A.every) {
		errno = 0;
		d = strtod(A.every, &end);
		if (errno || end == A.every || *end || !(d > 0) || d > 86400)
			return cli_usage_error(&info, "--every takes seconds "
						      "(more than 0, at most "
						      "86400), not '%s'",
					       A.every);
	}
	if (A.signal && strcmp(A.signal, "none")) {
		const char *s = A.signal;

		if (!strncmp(s, "SIG", 3))
			s += 3;
		if (strcmp(s, "USR1") && strcmp(s, "USR2") &&
		    strcmp(s, "HUP") && strcmp(s, "PROF") &&
		    strcmp(s, "WINCH") && strcmp(s, "URG"))
			return cli_usage_error(&info, "--signal takes USR1, "
						      "USR2, HUP, PROF, WINCH, "
						      "URG or none, not '%s'",
					       A.signal);
		A.signal = s;
	}
	return 0;
}

/* the snapshots the run wrote: ours, named heapdump-malloc-*.ndjson,
 * changed since start, listed on stderr in name order */
static void list_snapshots(const char *dir, time_t start)
{
	struct dirent **names = NULL;
	struct stat st;
	char path[PATH_MAX];
	int n, i, shown = 0;

	n = scandir(dir, &names, NULL, alphasort);
	for (i = 0; i < n; i++) {
		const char *e = names[i]->d_name;
		size_t l = strlen(e);

		if (!strncmp(e, "heapdump-malloc-", 16) && l > 23 &&
		    !strcmp(e + l - 7, ".ndjson") &&
		    (size_t)snprintf(path, sizeof(path), "%s/%s", dir, e) <
			    sizeof(path) &&
		    lstat(path, &st) == 0 && S_ISREG(st.st_mode) &&
		    st.st_uid == geteuid() && st.st_mtime >= start) {
			if (!shown++ && !A.quiet)
				fprintf(stderr, "%s %s: snapshots written:\n",
					PROGRAM_NAME, COMMAND_NAME);
			if (!A.quiet) {
				fputs("  ", stderr);
				cli_text_string(stderr, path, strlen(path));
				fputc('\n', stderr);
			}
		}
		free(names[i]);
	}
	free(names);
	if (!shown && !A.quiet)
		fprintf(stderr, "%s %s: no snapshot written in ", PROGRAM_NAME,
			COMMAND_NAME),
			cli_text_string(stderr, dir, strlen(dir)),
			fputc('\n', stderr);
	else if (!A.quiet)
		fprintf(stderr, "(report them: %s %s SNAP...)\n", PROGRAM_NAME,
			COMMAND_NAME);
}

static int run(char **cmd)
{
	char lib[PATH_MAX], dir[PATH_MAX];
	const char *d = A.dir;
	int pfd[2], st, e = 0, rc;
	time_t start = time(NULL) - 1;
	struct stat sb;
	pid_t pid;
	ssize_t r;

	if ((rc = check_run_args()))
		return rc;
	if (!d)
		d = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") :
							   "/tmp";
	if (stat(d, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
		cli_error("'%s' is no directory%s%s", d, errno ? ": " : "",
			  errno ? strerror(errno) : "");
		return EXIT_FAIL;
	}
	if (!realpath(d, dir)) {
		cli_error("cannot resolve '%s': %s", d, strerror(errno));
		return EXIT_FAIL;
	}
	if (find_library(lib, sizeof(lib)) || tracker_env(lib, dir))
		return EXIT_FAIL;
	if (pipe(pfd) || fcntl(pfd[1], F_SETFD, FD_CLOEXEC) ||
	    fcntl(pfd[0], F_SETFD, FD_CLOEXEC)) {
		cli_error("pipe: %s", strerror(errno));
		return EXIT_FAIL;
	}
	fflush(NULL);
	forward_signals();
	pid = fork();
	if (pid < 0) {
		cli_error("fork: %s", strerror(errno));
		return EXIT_FAIL;
	}
	if (pid == 0) {
		size_t i;

		for (i = 0; i < sizeof(forwarded) / sizeof(forwarded[0]); i++)
			signal(forwarded[i], SIG_DFL);
		close(pfd[0]);
		execvp(cmd[0], cmd);
		e = errno;
		if (write(pfd[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	child_pid = pid;
	close(pfd[1]);
	while ((r = read(pfd[0], &e, sizeof(e))) < 0 && errno == EINTR)
		;
	close(pfd[0]);
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR) {
			cli_error("waitpid: %s", strerror(errno));
			return EXIT_FAIL;
		}
	child_pid = 0;
	if (r == (ssize_t)sizeof(e)) {
		cli_error("cannot run '%s': %s", cmd[0], strerror(e));
		return EXIT_FAIL;
	}
	list_snapshots(dir, start);
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return EXIT_FAIL;
}

/* ==================================================================== */
/* report: heapdump malloc SNAP...                                       */
/* ==================================================================== */

static const char *const judgements[] = { "", "inactive", "one", "grows",
					  "flat", "empty" };

static const char *judgement_name(int j)
{
	return j > 0 && j <= 5 ? judgements[j] : "";
}

static const char *kind_name(int k)
{
	return k == HD_MSITE_RUBY ? "ruby" : "c";
}

static const char *size_of(uint64_t n, char *buf, size_t size)
{
	return cli_human_bytes(n, buf, size);
}

/* "+1.2 MB" / "-3.0 KB" */
static const char *signed_size(int64_t n, char *buf, size_t size)
{
	char b[24];

	cli_human_bytes(n < 0 ? (uint64_t)(-(n + 1)) + 1 : (uint64_t)n, b,
			sizeof(b));
	snprintf(buf, size, "%s%s", n < 0 ? "-" : n > 0 ? "+" : "", b);
	return buf;
}

static int any_leaks(const hd_mreport *r)
{
	return hd_mreport_leakscan(r) != NULL;
}

static void text_snaps(const hd_mreport *r)
{
	size_t N = hd_mreport_snap_count(r), k;
	char a[32], b[32], c[32];

	printf("snapshots:\n");
	for (k = 0; k < N; k++) {
		const char *name;
		uint64_t sk;
		const hd_msnap_header *h = hd_mreport_snap(r, k, &name, &sk);

		printf("  %zu  pid %lld  ", k + 1, (long long)h->pid);
		cli_text_string(stdout, h->reason, strlen(h->reason));
		printf("  +%.1f s  ruby ", h->time - hd_mreport_snap(r, 0,
								     NULL,
								     NULL)->time);
		cli_text_string(stdout, h->ruby, strlen(h->ruby));
		printf("  live %s in %s blocks", size_of(h->live_bytes, a, 32),
		       cli_commas(h->live_blocks, b, 32));
		if (h->has_malloc)
			printf("  malloc in use %s, free %s",
			       size_of(h->malloc_in_use, a, 32),
			       size_of(h->malloc_free, c, 32));
		if (h->has_rss)
			printf("  rss %s", size_of(h->rss, a, 32));
		if (!h->tracking)
			printf("  NOT TRACKING");
		printf("  ");
		cli_text_string(stdout, name, strlen(name));
		putchar('\n');
	}
}

static void text_sites(const hd_mreport *r, size_t shown)
{
	size_t N = hd_mreport_snap_count(r), i;
	int dump = A.dump != NULL, leaks = any_leaks(r);
	char a[32], b[32], c[32], d[32], e[32], f[40];

	printf("\nsites by %s (%zu of %zu):\n", N > 1 ? "growth" : "live bytes",
	       shown, hd_mreport_site_count(r));
	if (N > 1)
		printf("  %10s %10s %10s %10s %12s", "GROWTH", "ESTIMATE",
		       "PER SEC", "LIVE", "BLOCKS");
	else
		printf("  %10s %12s %12s %12s %10s", "LIVE", "BLOCKS", "ALLOCS",
		       "FREES", "ESTIMATE");
	if (dump)
		printf(" %10s %10s %12s", "DUMP", "ISEQ", "UNEXPLAINED");
	if (leaks)
		printf(" %10s", "LEAKED");
	printf("  KIND  SITE\n");
	for (i = 0; i < shown; i++) {
		const hd_mreport_site *s = hd_mreport_site_get(r, i);

		if (N > 1) {
			signed_size(s->slope >= 9e18 ? INT64_MAX :
				    s->slope <= -9e18 ? -INT64_MAX :
							(int64_t)s->slope,
				    f, sizeof(f));
			strcat(f, "/s");
			printf("  %10s %10s %10s %10s %12s",
			       signed_size(s->growth, a, 32),
			       signed_size(s->growth_estimate, b, 32), f,
			       size_of(s->live_bytes, d, 32),
			       cli_commas(s->live_blocks, e, 32));
		} else {
			printf("  %10s %12s %12s %12s %10s",
			       size_of(s->live_bytes, a, 32),
			       cli_commas(s->live_blocks, b, 32),
			       cli_commas(s->allocs, c, 32),
			       cli_commas(s->frees, d, 32),
			       size_of(s->estimate, e, 32));
		}
		if (dump && s->kind == HD_MSITE_RUBY)
			printf(" %10s %10s %12s", size_of(s->dump_memsize, a, 32),
			       size_of(s->dump_iseq_memsize, b, 32),
			       size_of(s->unexplained, c, 32));
		else if (dump)
			printf(" %10s %10s %12s", "-", "-", "-");
		if (leaks)
			printf(" %10s", size_of(s->leaked_bytes, a, 32));
		printf("  %-4s  ", kind_name(s->kind));
		cli_text_string(stdout, s->site, s->site_len);
		putchar('\n');
	}
}

static void text_leakscan(const hd_mreport *r)
{
	const hd_msnap_item *ls = hd_mreport_leakscan(r);
	char a[32], b[32], c[32];

	if (!ls)
		return;
	printf("\nleak scan (last snapshot, ");
	cli_text_string(stdout, ls->allocator, strlen(ls->allocator));
	printf(", %.2f s): %s unreached blocks, %s, of %s live blocks\n",
	       ls->seconds, cli_commas(ls->unreached_blocks, a, 32),
	       size_of(ls->unreached_bytes, b, 32),
	       cli_commas(ls->live_blocks, c, 32));
	if (*ls->blind) {
		printf("  blind to: ");
		cli_text_string(stdout, ls->blind, strlen(ls->blind));
		putchar('\n');
	}
}

static void print_text(const hd_mreport *r, size_t shown)
{
	const char *v = hd_mreport_verdict(r, NULL, NULL);

	printf("verdict: ");
	cli_text_string(stdout, v, strlen(v));
	printf("\n\n");
	text_snaps(r);
	text_sites(r, shown);
	text_leakscan(r);
}

/* The length of the valid UTF-8 sequence at p[0..n), 0 if invalid. */
static size_t utf8_len(const unsigned char *p, size_t n)
{
	size_t len, i;
	uint32_t cp;

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		len = 2, cp = p[0] & 0x1f;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		len = 3, cp = p[0] & 0x0f;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		len = 4, cp = p[0] & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp < 0xe000))) ||
	    (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return len;
}

/* A site name as a JSON string, as the snapshot writes it: an invalid
 * UTF-8 byte as \u00XX of its value (cli_json_string passes it raw). */
static void json_name(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, run, k;

	putchar('"');
	while (i < n) {
		for (k = i; k < n && p[k] >= 0x20 && p[k] < 0x7f && p[k] != '"' &&
			    p[k] != '\\';
		     k++)
			;
		if (k > i) {
			fwrite(p + i, 1, k - i, stdout);
			i = k;
			continue;
		}
		run = utf8_len(p + i, n - i);
		if (run > 1) {
			fwrite(p + i, 1, run, stdout);
			i += run;
		} else if (p[i] == '"' || p[i] == '\\') {
			printf("\\%c", p[i]);
			i++;
		} else {
			printf("\\u%04x", p[i]);
			i++;
		}
	}
	putchar('"');
}

static void json_num(const char *key, uint64_t v, int comma)
{
	printf("%s\"%s\":%llu", comma ? "," : "", key, (unsigned long long)v);
}

static void json_snap(const hd_msnap_header *h, const char *name,
		      uint64_t skipped)
{
	printf("{\"path\":");
	json_name(name, strlen(name));
	printf(",\"pid\":%lld,\"time\":%.3f,\"reason\":", (long long)h->pid,
	       h->time);
	json_name(h->reason, strlen(h->reason));
	printf(",\"ruby\":");
	json_name(h->ruby, strlen(h->ruby));
	printf(",\"allocator\":");
	json_name(h->allocator, strlen(h->allocator));
	printf(",\"tracking\":%s", h->tracking ? "true" : "false");
	if (!h->tracking) {
		printf(",\"why\":");
		json_name(h->why, strlen(h->why));
	}
	if (h->has_gc_count)
		json_num("gc_count", h->gc_count, 1);
	json_num("allocs", h->allocs, 1);
	json_num("frees", h->frees, 1);
	json_num("bytes_allocated", h->bytes_allocated, 1);
	json_num("live_bytes", h->live_bytes, 1);
	json_num("live_blocks", h->live_blocks, 1);
	if (h->has_malloc) {
		json_num("malloc_in_use", h->malloc_in_use, 1);
		json_num("malloc_free", h->malloc_free, 1);
	}
	if (h->has_rss)
		json_num("rss", h->rss, 1);
	json_num("skipped_lines", skipped, 1);
	putchar('}');
}

static void json_site(const hd_mreport *r, size_t i)
{
	const hd_mreport_site *s = hd_mreport_site_get(r, i);
	size_t N = hd_mreport_snap_count(r), k;

	printf("\"site\":");
	json_name(s->site, s->site_len);
	printf(",\"kind\":\"%s\"", kind_name(s->kind));
	json_num("live_bytes", s->live_bytes, 1);
	json_num("live_blocks", s->live_blocks, 1);
	json_num("allocs", s->allocs, 1);
	json_num("frees", s->frees, 1);
	json_num("bytes_allocated", s->bytes_allocated, 1);
	json_num("estimate", s->estimate, 1);
	if (s->has_gen)
		printf(",\"gen_oldest\":%llu,\"gen_mean\":%.15g",
		       (unsigned long long)s->gen_oldest, s->gen_mean);
	if (N > 1) {
		printf(",\"growth\":%lld,\"growth_estimate\":%lld,"
		       "\"slope\":%.15g,\"grows_every_step\":%s,\"live\":[",
		       (long long)s->growth, (long long)s->growth_estimate,
		       s->slope, s->grows_every_step ? "true" : "false");
		for (k = 0; k < N; k++)
			printf("%s%llu", k ? "," : "",
			       (unsigned long long)hd_mreport_site_live(r, i,
									k));
		putchar(']');
	}
	if (s->joined && s->kind == HD_MSITE_RUBY) {
		json_num("dump_objects", s->dump_objects, 1);
		json_num("dump_memsize", s->dump_memsize, 1);
		json_num("dump_iseq_memsize", s->dump_iseq_memsize, 1);
		json_num("unexplained", s->unexplained, 1);
	}
	if (any_leaks(r)) {
		json_num("leaked_blocks", s->leaked_blocks, 1);
		json_num("leaked_bytes", s->leaked_bytes, 1);
	}
}

static void json_leakscan(const hd_msnap_item *ls)
{
	printf("{\"allocator\":");
	json_name(ls->allocator, strlen(ls->allocator));
	json_num("live_blocks", ls->live_blocks, 1);
	json_num("scanned_bytes", ls->scanned_bytes, 1);
	json_num("unreached_blocks", ls->unreached_blocks, 1);
	json_num("unreached_bytes", ls->unreached_bytes, 1);
	printf(",\"seconds\":%.3f,\"blind\":", ls->seconds);
	json_name(ls->blind, strlen(ls->blind));
	putchar('}');
}

static void print_json(const hd_mreport *r, size_t shown)
{
	size_t N = hd_mreport_snap_count(r), k, i;
	int j;
	const char *v = hd_mreport_verdict(r, &j, NULL);

	printf("{\"verdict\":");
	json_name(v, strlen(v));
	printf(",\"judgement\":\"%s\",\"snapshots\":[", judgement_name(j));
	for (k = 0; k < N; k++) {
		const char *name;
		uint64_t sk;
		const hd_msnap_header *h = hd_mreport_snap(r, k, &name, &sk);

		if (k)
			putchar(',');
		json_snap(h, name, sk);
	}
	printf("],\"site_count\":%zu,\"sites\":[", hd_mreport_site_count(r));
	for (i = 0; i < shown; i++) {
		printf("%s{", i ? "," : "");
		json_site(r, i);
		putchar('}');
	}
	putchar(']');
	if (hd_mreport_leakscan(r)) {
		printf(",\"leakscan\":");
		json_leakscan(hd_mreport_leakscan(r));
	}
	printf("}\n");
}

/* the verdict's line, then one line a site, then the leak scan's */
static void print_ndjson(const hd_mreport *r, size_t shown)
{
	size_t i;
	int j;
	const char *v = hd_mreport_verdict(r, &j, NULL);

	printf("{\"type\":\"verdict\",\"judgement\":\"%s\",\"verdict\":",
	       judgement_name(j));
	json_name(v, strlen(v));
	printf("}\n");
	for (i = 0; i < shown; i++) {
		printf("{\"type\":\"site\",\"rank\":%zu,", i + 1);
		json_site(r, i);
		printf("}\n");
	}
	if (hd_mreport_leakscan(r)) {
		printf("{\"type\":\"leakscan\",\"leakscan\":");
		json_leakscan(hd_mreport_leakscan(r));
		printf("}\n");
	}
}

static void print_tsv(const hd_mreport *r, size_t shown)
{
	size_t N = hd_mreport_snap_count(r), i;

	printf("kind\tsite\tlive_bytes\tlive_blocks\tallocs\tfrees\t"
	       "bytes_allocated\testimate\tgrowth\tgrowth_estimate\tslope\t"
	       "dump_memsize\tdump_iseq_memsize\tunexplained\tleaked_bytes\n");
	for (i = 0; i < shown; i++) {
		const hd_mreport_site *s = hd_mreport_site_get(r, i);

		printf("%s\t", kind_name(s->kind));
		cli_text_string(stdout, s->site, s->site_len);
		printf("\t%llu\t%llu\t%llu\t%llu\t%llu\t%llu\t%lld\t%lld\t"
		       "%.15g\t%llu\t%llu\t%llu\t%llu\n",
		       (unsigned long long)s->live_bytes,
		       (unsigned long long)s->live_blocks,
		       (unsigned long long)s->allocs,
		       (unsigned long long)s->frees,
		       (unsigned long long)s->bytes_allocated,
		       (unsigned long long)s->estimate,
		       (long long)(N > 1 ? s->growth : 0),
		       (long long)(N > 1 ? s->growth_estimate : 0),
		       N > 1 ? s->slope : 0.0,
		       (unsigned long long)s->dump_memsize,
		       (unsigned long long)s->dump_iseq_memsize,
		       (unsigned long long)s->unexplained,
		       (unsigned long long)s->leaked_bytes);
	}
}

static int add_snapshot(hd_mreport *r, const char *path)
{
	hd_msnap_options o = HD_MSNAP_OPTIONS_INIT;
	hd_msnap *m = NULL;
	hd_error err = { 0 };
	uint64_t sk;
	int rc;

	o.strict = A.strict;
	if ((rc = hd_msnap_open(&m, path, &o, &err)) ||
	    (rc = hd_mreport_add(r, m, path, &err))) {
		cli_text_string(stderr, "", 0);
		fprintf(stderr, "%s %s: ", PROGRAM_NAME, COMMAND_NAME);
		cli_text_string(stderr, path, strlen(path));
		if (err.line)
			fprintf(stderr, ":%llu:%llu",
				(unsigned long long)err.line,
				(unsigned long long)err.column);
		fprintf(stderr, ": %s\n", err.msg);
		hd_msnap_close(m);
		return EXIT_FAIL;
	}
	sk = hd_msnap_skipped(m);
	if (sk && !A.quiet) {
		fprintf(stderr, "%s %s: ", PROGRAM_NAME, COMMAND_NAME);
		cli_text_string(stderr, path, strlen(path));
		fprintf(stderr, ": %llu damaged line%s skipped (the first: "
				"line %llu)\n",
			(unsigned long long)sk, sk == 1 ? "" : "s",
			(unsigned long long)hd_msnap_first_skip(m));
	}
	hd_msnap_close(m);
	return 0;
}

static int join_dump(hd_mreport *r)
{
	struct cli_input in;
	hd_store *s = NULL;
	hd_error err = { 0 };
	int rc;

	cli_input_init(&in, A.dump, 0, 1);
	if ((rc = cli_open_store(&in, &s)))
		return rc;
	rc = hd_mreport_join(r, s, &err);
	hd_store_close(s);
	return rc ? cli_lib_error(&err) : 0;
}

static int report(int n, char **paths)
{
	hd_mreport_options o = HD_MREPORT_OPTIONS_INIT;
	hd_mreport *r = NULL;
	hd_error err = { 0 };
	size_t shown;
	int fmt, rc, i;

	if (A.dir || A.every || A.leaks || A.signal)
		return cli_usage_error(&info, "-o, --every, --leaks and "
					      "--signal run a program: "
					      "heapdump malloc [options] -- "
					      "COMMAND");
	if ((rc = cli_parse_format(&info, A.format, 4, &fmt)))
		return rc;
	if (n < 1)
		return cli_usage_error(&info, "no snapshot given (or -- "
					      "COMMAND to run one)");
	if (n > HD_MREPORT_MAX_SNAPS)
		return cli_usage_error(&info, "at most %d snapshots",
				       HD_MREPORT_MAX_SNAPS);
	if (A.has_min_growth)
		o.min_growth = A.min_growth;
	if (hd_mreport_new(&r, &o, &err))
		return cli_lib_error(&err);
	for (i = 0; i < n && !rc; i++)
		rc = add_snapshot(r, paths[i]);
	if (!rc && A.dump)
		rc = join_dump(r);
	if (!rc && hd_mreport_finish(r, &err))
		rc = cli_lib_error(&err);
	if (!rc) {
		shown = hd_mreport_site_count(r);
		if (A.top == ULLONG_MAX)
			A.top = 20;
		if (A.top && A.top < shown)
			shown = (size_t)A.top;
		if (fmt == CLI_JSON)
			print_json(r, shown);
		else if (fmt == CLI_TSV)
			print_tsv(r, shown);
		else if (fmt == CLI_NDJSON)
			print_ndjson(r, shown);
		else
			print_text(r, shown);
	}
	hd_mreport_free(r);
	return rc;
}

int cmd_malloc(int argc, char **argv)
{
	int first, rc, i;

	A.top = ULLONG_MAX; /* not given */
	if ((rc = cli_parse(&info, argc, argv, &first)))
		return rc < 0 ? EXIT_OK : rc;
	/* getopt leaves the "--" just before the operands after it */
	if (first > 1 && !strcmp(argv[first - 1], "--")) {
		if (first >= argc)
			return cli_usage_error(&info, "-- without a command");
		return run(argv + first);
	}
	for (i = first; i < argc; i++)
		if (!strcmp(argv[i], "--"))
			return cli_usage_error(&info, "operands before --: the "
						      "command goes after it");
	return report(argc - first, argv + first);
}
