/*
 * cmd_dump.c - heapdump dump PID: asks a running Ruby process that loaded
 * the heapdump gem's signal handler (require "heapdump/signal") for a heap
 * dump, and waits for it.
 *
 * The protocol (man 1 heapdump-dump): the process, on the signal, forks a
 * child that writes DIR/heapdump-PID-TIME.json through a temporary file
 * and renames it into place after its sidecar PATH.hdmeta. DIR is the
 * process's $HEAPDUMP_DIR, else its $TMPDIR, else /tmp; we read them from
 * /proc/PID/environ. A new name matching the pattern means a complete dump,
 * if the process's user wrote it (cli_dump_trusted: not a link, a regular
 * file owned by the process's effective uid that no group or other may
 * write); any other file at such a name, planted by another user of a
 * shared DIR, is named once and ignored. With -o it is moved by
 * hd_file_move (a copy across file systems), and its sidecar with it
 * when the sidecar passes the same check.
 *
 * With --attach the process need not have loaded the gem: attach.c has it
 * write DIR/heapdump-PID-TIME.json itself, through gdb and a postponed job.
 */
#include "attach.h"
#include "cmd.h"
#include "common.h"
#include "opt.h"
#include "sidecar.h"

#include <dirent.h>
#include <limits.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define COMMAND_NAME "dump"

static struct dump_args {
	const char *out, *dir, *sig;
	unsigned long long timeout;
	int quiet, attach;
} A;

static const struct cli_opt opts[] = {
	OPT_STRING('o', "output", "FILE", &A.out,
		   "move the dump (and its sidecar) to FILE"),
	OPT_STRING(0, "dir", "DIR", &A.dir,
		   "where the process writes dumps (default: its "
		   "$HEAPDUMP_DIR, $TMPDIR or /tmp)"),
	OPT_STRING(0, "signal", "SIG", &A.sig,
		   "the signal to send, a name or number (default URG)"),
	OPT_UINT(0, "timeout", "SECONDS", &A.timeout,
		 "give up after SECONDS (default 60)"),
	OPT_FLAG(0, "attach", &A.attach,
		 "a process without the gem: gdb has it dump at a safe point"),
	OPT_FLAG('q', "quiet", &A.quiet, "no message while waiting"),
	OPT_END()
};

static const struct cli_cmd_info info = {
	COMMAND_NAME, "[options] PID",
	"Signal a Ruby process running the heapdump gem's handler (require\n"
	"\"heapdump/signal\") to dump its heap, wait until the dump is\n"
	"complete, and print its path. With --attach, any Ruby process:\n"
	"gdb schedules the dump at its next safe point.",
	opts
};

static const struct { const char *name; int sig; } signals[] = {
	{ "URG", SIGURG },   { "USR1", SIGUSR1 }, { "USR2", SIGUSR2 },
	{ "HUP", SIGHUP },   { "QUIT", SIGQUIT }, { "TTIN", SIGTTIN },
	{ "TTOU", SIGTTOU }, { "WINCH", SIGWINCH }, { "PROF", SIGPROF },
	{ "INT", SIGINT },   { "TERM", SIGTERM }, { "CONT", SIGCONT },
};

static int parse_signal(const char *s)
{
	char *end;
	long n;
	size_t i;

	if (!s)
		return SIGURG;
	if (strncmp(s, "SIG", 3) == 0)
		s += 3;
	for (i = 0; i < sizeof(signals) / sizeof(signals[0]); i++)
		if (strcmp(s, signals[i].name) == 0)
			return signals[i].sig;
	errno = 0;
	n = strtol(s, &end, 10);
	if (errno || end == s || *end || n <= 0 || n >= NSIG)
		return -1;
	return (int)n;
}

static long parse_pid(const char *s)
{
	char *end;
	long n;

	errno = 0;
	n = strtol(s, &end, 10);
	if (errno || end == s || *end || n <= 0 || n > 0x3fffffff)
		return -1;
	return n;
}

/* NAME=value from /proc/PID/environ into buf; 0 if found and not empty */
static int proc_env(long pid, const char *name, char *buf, size_t size)
{
	char path[64], data[65536];
	size_t nlen = strlen(name), off = 0;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%ld/environ", pid);
	if ((fd = open(path, O_RDONLY)) < 0)
		return -1;
	n = read(fd, data, sizeof(data) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	data[n] = '\0';
	while (off < (size_t)n) {
		const char *e = data + off;
		size_t len = strlen(e);

		if (len > nlen + 1 && strncmp(e, name, nlen) == 0 &&
		    e[nlen] == '=' && len - nlen - 1 < size) {
			memcpy(buf, e + nlen + 1, len - nlen);
			return 0;
		}
		off += len + 1;
	}
	return -1;
}

static const char *dump_dir(long pid, char *buf, size_t size)
{
	if (A.dir)
		return A.dir;
	if (proc_env(pid, "HEAPDUMP_DIR", buf, size) == 0 ||
	    proc_env(pid, "TMPDIR", buf, size) == 0)
		return buf;
	return "/tmp";
}

/* heapdump-PID-*.json or .json.gz; not a sidecar (.hdmeta, or an older
 * gem's .meta.json), and temporary files start with a dot */
static int is_dump_name(const char *name, const char *prefix)
{
	size_t n = strlen(name), p = strlen(prefix);

	if (strncmp(name, prefix, p) != 0)
		return 0;
	if (n > p + 10 && strcmp(name + n - 10, ".meta.json") == 0)
		return 0;
	return (n > p + 5 && strcmp(name + n - 5, ".json") == 0) ||
	       (n > p + 8 && strcmp(name + n - 8, ".json.gz") == 0);
}

struct names {
	char **v;
	size_t n, cap;
};

/* a followed by b, malloc'ed (NULL when out of memory) */
static char *concat(const char *a, const char *b)
{
	size_t na = strlen(a), nb = strlen(b);
	char *s = malloc(na + nb + 1);

	if (s) {
		memcpy(s, a, na);
		memcpy(s + na, b, nb + 1);
	}
	return s;
}

static void names_free(struct names *s)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	memset(s, 0, sizeof(*s));
}

static int names_has(const struct names *s, const char *name)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (strcmp(s->v[i], name) == 0)
			return 1;
	return 0;
}

static int names_add(struct names *s, const char *name)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 16;
		char **v = realloc(s->v, cap * sizeof(*v));

		if (!v)
			return -1;
		s->v = v;
		s->cap = cap;
	}
	if (!(s->v[s->n] = strdup(name)))
		return -1;
	s->n++;
	return 0;
}

/* The dumps of the process in dir: into *seen (first call), or the first
 * one not in *seen that the process's user (euid) wrote into *found
 * (malloc'ed); any other new one is said once and added to *seen.
 * Returns 1 when found, 0, or -1 on error. */
static int scan_dir(const char *dir, const char *prefix, struct names *seen,
		    int collect, long euid, char **found)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char why[160];
	int rc = 0;

	if (!d)
		return -1;
	while ((e = readdir(d))) {
		char *d_slash, *path;

		if (!is_dump_name(e->d_name, prefix))
			continue;
		if (collect) {
			if (names_add(seen, e->d_name)) {
				rc = -1;
				break;
			}
			continue;
		}
		if (names_has(seen, e->d_name))
			continue;
		d_slash = concat(dir, "/");
		path = d_slash ? concat(d_slash, e->d_name) : NULL;
		free(d_slash);
		if (!path) {
			rc = -1;
			break;
		}
		if (cli_dump_trusted(path, euid, why, sizeof(why)) == 0) {
			*found = path;
			rc = 1;
			break;
		}
		cli_error("ignoring '%s': %s", path, why);
		free(path);
		if (names_add(seen, e->d_name)) {
			rc = -1;
			break;
		}
	}
	closedir(d);
	return rc;
}

/*
 * The dump, then its sidecar, moved to out by the library's rules
 * (man 1 heapdump, OUTPUTS): across file systems a copy through a
 * temporary file beside out, so that a failure keeps both the dump and
 * what out was. A device or FIFO gets the dump alone, written in place:
 * the sidecar stays beside the dump's old name.
 */
static int move_out(const char *found, const char *out, long euid)
{
	/* the sidecar's name: the gem's, or an older gem's */
	const char *sfx = CLI_SIDECAR_SUFFIX;
	char *from = concat(found, sfx), *to;
	hd_error err = { 0 };
	struct stat sb;
	char why[160];
	int rc = EXIT_OK, in_place;

	/* lstat: a link at the new name, even a dangling one, is what the
	 * trust check below judges, not a reason to look at the old name */
	if (from && lstat(from, &sb) != 0) {
		free(from);
		sfx = ".meta.json";
		from = concat(found, sfx);
	}
	to = concat(out, sfx);
	in_place = stat(out, &sb) == 0 && !S_ISREG(sb.st_mode);
	if (!from || !to) {
		cli_error("out of memory");
		rc = EXIT_FAIL;
	} else if (hd_file_move(found, out, &err) != 0) {
		cli_error("%s (the dump is still '%s')", err.msg, found);
		rc = EXIT_FAIL;
	} else if (in_place || (lstat(from, &sb) != 0 && errno == ENOENT)) {
		/* no sidecar to move */
	} else if (cli_dump_trusted(from, euid, why, sizeof(why)) != 0) {
		cli_error("the sidecar '%s' is not moved: %s", from, why);
	} else if (hd_file_move(from, to, &err) != 0) {
		rc = cli_lib_error(&err);
	}
	free(from);
	free(to);
	return rc;
}

/* ---- the process's memory from outside (issue 35 section 1) ---- */

/* The sidecar's text (up to 1 MiB, NUL-terminated) when it is a regular
 * file: malloc'ed, or NULL */
static char *read_small(const char *path)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = fopen(path, "re");

	if (!f)
		return NULL;
	if ((buf = malloc((1u << 20) + 1)))
		n = fread(buf, 1, 1u << 20, f);
	fclose(f);
	if (buf)
		buf[n] = '\0';
	return buf;
}

/*
 * What /proc says of process pid (hd_memory_probe: smaps_rollup, the
 * thread stacks), into the dump's sidecar when it lacks the mem_ keys:
 * a gem's sidecar (the name move_out moves, trusted as it judges it)
 * gets them appended; a dump of --attach, which has none, gets one of
 * its own. Measured now, after the dump, not when it began: mem_source
 * "proc" says so. Anything else (another user's file, a link, a file
 * that is not a gem's sidecar) is left alone; a failure is said and
 * changes nothing.
 */
static void outside_sidecar(const char *found, long pid, long euid)
{
	char *path = concat(found, CLI_SIDECAR_SUFFIX), *old = NULL, *end;
	hd_error err = { 0 };
	hd_memory_proc p;
	hd_outfile *o = NULL;
	struct stat sb;
	char why[160];
	FILE *f;

	if (path && lstat(path, &sb) != 0) {
		free(path);
		path = concat(found, ".meta.json");
		if (path && lstat(path, &sb) != 0) {
			free(path);
			path = A.attach ? concat(found, CLI_SIDECAR_SUFFIX) : NULL;
		} else if (path && cli_dump_trusted(path, euid, why, sizeof(why))) {
			goto out;
		}
	} else if (path && cli_dump_trusted(path, euid, why, sizeof(why))) {
		goto out;
	}
	if (!path || hd_memory_probe(&p, (int)pid, &err) != 0)
		goto out;
	if (lstat(path, &sb) == 0 &&
	    (!(old = read_small(path)) || strstr(old, "\"mem_rss\"") ||
	     strncmp(old, "{\"heapdump_sidecar\":", 20) != 0 ||
	     !(end = strrchr(old, '}'))))
		goto out;
	if (hd_outfile_open(&o, path, found, 0, &err) ||
	    !(f = hd_outfile_stream(o, &err))) {
		cli_error("%s", err.msg);
		goto out;
	}
	if (old)
		fprintf(f, "%.*s,", (int)(end - old), old);
	else
		fprintf(f, "{\"heapdump_sidecar\":1,\"pid\":%ld,\"rss_bytes\":%llu,",
			pid, (unsigned long long)p.rss);
	fprintf(f, "\"heapdump_memory\":1,\"mem_source\":\"proc\",\"mem_rss\":%llu,"
		"\"mem_anon\":%llu,\"mem_file\":%llu,\"mem_shmem\":%llu",
		(unsigned long long)p.rss, (unsigned long long)p.anon,
		(unsigned long long)p.file, (unsigned long long)p.shmem);
	if (p.has_stacks)
		fprintf(f, ",\"mem_stacks\":%llu,\"mem_stack_count\":%llu",
			(unsigned long long)p.stacks,
			(unsigned long long)p.stack_count);
	fputs("}\n", f);
	if (hd_outfile_commit(o, &err))
		cli_error("%s", err.msg);
out:
	hd_outfile_free(o);
	free(old);
	free(path);
}

/* The end of both routes: the dump moved to -o's name if given, its name
 * printed; found is freed. */
static int finish(int rc, char *found, long euid, long pid)
{
	if (!rc)
		outside_sidecar(found, pid, euid);
	if (!rc && A.out)
		rc = move_out(found, A.out, euid);
	if (!rc)
		printf("%s\n", A.out ? A.out : found);
	free(found);
	return rc;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static int wait_for_dump(long pid, const char *dir, const char *prefix,
			 struct names *seen, long euid, char **found)
{
	double deadline = cli_now() + (double)A.timeout;
	int rc;

	while ((rc = scan_dir(dir, prefix, seen, 0, euid, found)) == 0) {
		if (kill((pid_t)pid, 0) != 0 && errno == ESRCH) {
			cli_error("process %ld exited before its dump was "
				  "complete", pid);
			return EXIT_FAIL;
		}
		if (cli_now() > deadline) {
			cli_error("no dump from process %ld in '%s' after %llu "
				  "s: does it run require \"heapdump/signal\" "
				  "(or HeapDump.on_signal), with this signal "
				  "and directory?", pid, dir, A.timeout);
			return EXIT_FAIL;
		}
		sleep_ms(50);
	}
	if (rc < 0) {
		cli_error("cannot read '%s': %s", dir, strerror(errno));
		return EXIT_FAIL;
	}
	return EXIT_OK;
}

static int signal_process(long pid, int sig)
{
	if (kill((pid_t)pid, sig) == 0)
		return EXIT_OK;
	if (errno == ESRCH)
		cli_error("no such process: %ld", pid);
	else
		cli_error("cannot signal process %ld: %s", pid,
			  strerror(errno));
	return EXIT_FAIL;
}

/* --attach: the process writes to an absolute DIR (its cwd is not ours) */
static int dump_attached(long pid)
{
	char envdir[4096], absdir[PATH_MAX], *found = NULL;
	const char *dir = dump_dir(pid, envdir, sizeof(envdir));
	long euid = cli_proc_euid(pid);
	int rc;

	if (!realpath(dir, absdir)) {
		cli_error("cannot use '%s' as the dump directory: %s", dir,
			  strerror(errno));
		return EXIT_FAIL;
	}
	rc = cli_attach_dump(pid, absdir, A.timeout, A.quiet, &found);
	return finish(rc, found, euid, pid);
}

int cmd_dump(int argc, char **argv)
{
	struct names seen = { 0 };
	char envdir[4096], prefix[64], *found = NULL;
	const char *dir;
	int rc, first, sig;
	long pid, euid;

	memset(&A, 0, sizeof(A));
	A.timeout = 60;
	if ((rc = cli_parse(&info, argc, argv, &first)))
		return rc < 0 ? EXIT_OK : rc;
	if (argc - first != 1)
		return cli_usage_error(&info, argc - first ?
						      "one process id, please" :
						      "which process id?");
	if ((pid = parse_pid(argv[first])) < 0)
		return cli_usage_error(&info, "not a process id: '%s'",
				       argv[first]);
	if ((sig = parse_signal(A.sig)) < 0)
		return cli_usage_error(&info, "unknown signal '%s'", A.sig);
	if (!A.timeout)
		return cli_usage_error(&info, "--timeout must be at least 1");
	if (A.attach && A.sig)
		return cli_usage_error(&info, "--signal does not apply to "
				       "--attach");
	if (A.attach)
		return dump_attached(pid);
	if ((rc = signal_process(pid, 0)))
		return rc;
	if ((euid = cli_proc_euid(pid)) < 0) {
		cli_error("cannot read the user of process %ld from /proc",
			  pid);
		return EXIT_FAIL;
	}
	dir = dump_dir(pid, envdir, sizeof(envdir));
	snprintf(prefix, sizeof(prefix), "heapdump-%ld-", pid);
	if (scan_dir(dir, prefix, &seen, 1, euid, NULL) < 0) {
		cli_error("cannot read '%s': %s", dir, strerror(errno));
		return EXIT_FAIL;
	}
	if (!A.quiet)
		fprintf(stderr, "%s: waiting for the dump of process %ld in "
			"%s\n", PROGRAM_NAME, pid, dir);
	rc = signal_process(pid, sig);
	if (!rc)
		rc = wait_for_dump(pid, dir, prefix, &seen, euid, &found);
	names_free(&seen);
	return finish(rc, found, euid, pid);
}
