/*
 * attach.c - heapdump dump --attach: a Ruby process that never loaded the
 * heapdump gem writes its own heap dump, at a safe point.
 *
 * gdb (Debian's, with Python) attaches and, from that arbitrary stop,
 * calls only what is async-signal-safe: mmap(2) for a page that gdb fills
 * with a Ruby program (no malloc in the process), then the postponed job
 * API with rb_eval_string as the job and the page as its argument
 * (rb_postponed_job_preregister + rb_postponed_job_trigger where libruby
 * exports them, 3.3 on; rb_postponed_job_register_one before, which 3.1
 * documents as async-signal-safe). gdb detaches. Ruby runs the job at its
 * next safe point (an interrupt check, GVL held, not inside GC); the
 * job only starts a thread, since a job runs masked as a trap handler
 * (no Mutex, hence no require), and the thread writes the dump.
 *
 * A process blocked in sleep, a queue or I/O checks interrupts only when
 * something wakes it: we send SIGCHLD, which Ruby catches and, when the
 * program does not trap CHLD, ignores; its handler wakes the main thread
 * through the timer thread as for any signal.
 *
 * The files, in DIR (all made 0600; R1 and R2 are two unrelated random
 * parts from getrandom, so that the request, which anyone may see in
 * DIR, names nothing another user could plant or race for; the names
 * reach gdb through a pipe, never its command line, which ps shows):
 *   .heapdump-PID-R1.attach    the request, made by us before gdb runs;
 *                              the thread claims it by unlinking it, and
 *                              does nothing when it is gone, so that a
 *                              request we gave up on is never served
 *   .heapdump-PID-R2.json.tmp  the dump being written
 *   heapdump-PID-TIME-R2.json  the dump, renamed into place complete;
 *                              taken only if cli_dump_trusted says the
 *                              process's user wrote it
 *   .heapdump-PID-R2.error     what failed in the process, if anything
 */
#include "attach.h"
#include "common.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define ATTACH_TAG "heapdump-attach: "
#define GDB_OUTPUT_MAX 65536

/* The gdb side. main(pid, code) is appended; everything the process is
 * made to run is a call through a function pointer of a known type. */
static const char gdb_script[] =
	"import gdb\n"
	"def say(m):\n"
	"    gdb.write('" ATTACH_TAG "%s\\n' % m)\n"
	"    gdb.flush()\n"
	"def sym(n):\n"
	"    try:\n"
	"        return int(gdb.parse_and_eval('(long)&' + n))\n"
	"    except gdb.error:\n"
	"        return 0\n"
	"def call(f, t, a):\n"
	"    return int(gdb.parse_and_eval('((%s)%d)(%s)' % (t, f, a)))\n"
	"def run(inf, pid, code):\n"
	"    gdb.execute('set scheduler-locking on')\n"
	"    gdb.execute('set unwindonsignal on')\n"
	"    gdb.execute('set unwind-on-terminating-exception on')\n"
	"    main = [t for t in inf.threads() if t.ptid[1] == pid]\n"
	"    if not main:\n"
	"        say('error its main thread is gone')\n"
	"        return\n"
	"    main[0].switch()\n"
	"    ev = sym('rb_eval_string')\n"
	"    pre = sym('rb_postponed_job_preregister')\n"
	"    trig = sym('rb_postponed_job_trigger')\n"
	"    one = sym('rb_postponed_job_register_one')\n"
	"    mm = sym('mmap')\n"
	"    if not ev or not ((pre and trig) or one):\n"
	"        say('noruby')\n"
	"        return\n"
	"    if not mm:\n"
	"        say('error no mmap in the process')\n"
	"        return\n"
	"    size = (len(code) + 1 + 4095) // 4096 * 4096\n"
	"    p = call(mm, 'long(*)(long,long,long,long,long,long)',\n"
	"             '0,%d,3,34,-1,0' % size)\n"
	"    if p <= 0:\n"
	"        say('error mmap failed in the process')\n"
	"        return\n"
	"    inf.write_memory(p, code + b'\\0')\n"
	"    if pre and trig:\n"
	"        h = call(pre, 'unsigned int(*)(unsigned int,void*,void*)',\n"
	"                 '0,(void*)%d,(void*)%d' % (ev, p)) & 0xffffffff\n"
	"        if h == 0xffffffff:\n"
	"            say('error its postponed job table is full')\n"
	"            return\n"
	"        gdb.parse_and_eval('((void(*)(unsigned int))%d)(%d)' % (trig, h))\n"
	"        say('ok rb_postponed_job_trigger')\n"
	"    else:\n"
	"        r = call(one, 'int(*)(unsigned int,void*,void*)',\n"
	"                 '0,(void*)%d,(void*)%d' % (ev, p))\n"
	"        if r == 0:\n"
	"            say('error its postponed job buffer is full')\n"
	"        elif r == 2:\n"
	"            say('error a dump asked for earlier is still waiting for "
	"its safe point')\n"
	"        else:\n"
	"            say('ok rb_postponed_job_register_one')\n"
	"def main(pid, code):\n"
	"    inf = gdb.selected_inferior()\n"
	"    if inf.pid != pid:\n"
	"        say('noattach')\n"
	"        return\n"
	"    try:\n"
	"        run(inf, pid, code)\n"
	"    except Exception as e:\n"
	"        say('error ' + str(e).replace('\\n', ' '))\n"
	"    finally:\n"
	"        gdb.execute('detach', to_string=True)\n";

/* The job, run by rb_eval_string at the safe point. %1$s..%4$s: the
 * request, the temporary file, the dump, the error file (twice), as Ruby
 * literals. */
#define RUBY_JOB \
	"begin\n" \
	"  Thread.new(%s, %s, %s, %s) do |q, t, d, e|\n" \
	"    begin\n" \
	"      File.unlink(q)\n" \
	"    rescue Exception\n" \
	"      next\n" \
	"    end\n" \
	"    begin\n" \
	"      Thread.current.name = 'heapdump-attach'\n" \
	"      require 'objspace'\n" \
	"      GC.start\n" \
	"      File.open(t, File::WRONLY | File::CREAT | File::EXCL, 0600) do |o|\n" \
	"        o.chmod(0600)\n" \
	"        ObjectSpace.dump_all(output: o)\n" \
	"      end\n" \
	"      File.rename(t, d)\n" \
	"    rescue Exception => x\n" \
	"      begin\n" \
	"        File.open(e, File::WRONLY | File::CREAT | File::EXCL, 0600) { |o|" \
	" o.write(\"#{x.class}: #{x.message}\") }\n" \
	"      rescue Exception\n" \
	"      end\n" \
	"    ensure\n" \
	"      begin\n" \
	"        File.unlink(t)\n" \
	"      rescue Exception\n" \
	"      end\n" \
	"    end\n" \
	"  end\n" \
	"rescue Exception => x\n" \
	"  begin\n" \
	"    File.open(%s, File::WRONLY | File::CREAT | File::EXCL, 0600) { |o|" \
	" o.write(\"#{x.class}: #{x.message}\") }\n" \
	"  rescue Exception\n" \
	"  end\n" \
	"end\n" \
	"nil\n"


struct attach_files {
	char *req, *tmp, *dump, *err;
};

/* a malloc'ed printf */
static char *astr(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *astr(const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || !(s = malloc((size_t)n + 1)))
		return NULL;
	va_start(ap, fmt);
	vsnprintf(s, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return s;
}

/* s as a Ruby double-quoted literal: every byte but [A-Za-z0-9/._-] as
 * \xNN, so that no path can change the program */
static char *ruby_literal(const char *s)
{
	size_t n = strlen(s), i, o = 0;
	char *r = malloc(n * 4 + 3);

	if (!r)
		return NULL;
	r[o++] = '"';
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '/' || c == '.' ||
		    c == '_' || c == '-')
			r[o++] = (char)c;
		else
			o += (size_t)sprintf(r + o, "\\x%02x", c);
	}
	r[o++] = '"';
	r[o] = '\0';
	return r;
}

static void hex(char *out, const char *s, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < n; i++) {
		out[2 * i] = digits[(unsigned char)s[i] >> 4];
		out[2 * i + 1] = digits[(unsigned char)s[i] & 15];
	}
	out[2 * n] = '\0';
}

static void files_free(struct attach_files *f)
{
	free(f->req);
	free(f->tmp);
	free(f->dump);
	free(f->err);
	memset(f, 0, sizeof(*f));
}

/* 16 random hex digits into out[17]: 0, or -1 without randomness */
static int random_hex(char out[17])
{
	unsigned char r[8];
	size_t got = 0;
	ssize_t n;

	while (got < sizeof(r)) {
		n = getrandom(r + got, sizeof(r) - got, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		got += (size_t)n;
	}
	hex(out, (const char *)r, sizeof(r));
	return 0;
}

static int files_make(struct attach_files *f, const char *dir, long pid)
{
	char stamp[32], name[128], r1[17], r2[17];
	struct timeval tv;
	struct tm tm;

	if (random_hex(r1) || random_hex(r2))
		return -1;
	gettimeofday(&tv, NULL);
	localtime_r(&tv.tv_sec, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%S", &tm);
	snprintf(name, sizeof(name), "heapdump-%ld-%s-%06ld-%s", pid, stamp,
		 (long)tv.tv_usec, r2);
	f->req = astr("%s/.heapdump-%ld-%s.attach", dir, pid, r1);
	f->tmp = astr("%s/.heapdump-%ld-%s.json.tmp", dir, pid, r2);
	f->dump = astr("%s/%s.json", dir, name);
	f->err = astr("%s/.heapdump-%ld-%s.error", dir, pid, r2);
	return f->req && f->tmp && f->dump && f->err ? 0 : -1;
}

static char *job_code(const struct attach_files *f)
{
	char *q = ruby_literal(f->req), *t = ruby_literal(f->tmp);
	char *d = ruby_literal(f->dump), *e = ruby_literal(f->err);
	char *code = NULL;

	if (q && t && d && e)
		code = astr(RUBY_JOB, q, t, d, e, e);
	free(q);
	free(t);
	free(d);
	free(e);
	return code;
}

/* the value of "Field:" in /proc/PID/status, or -1 */
static long proc_status(long pid, const char *field, int base)
{
	char path[64], line[256];
	size_t n = strlen(field);
	long v = -1;
	FILE *fp;

	snprintf(path, sizeof(path), "/proc/%ld/status", pid);
	if (!(fp = fopen(path, "r")))
		return -1;
	while (fgets(line, sizeof(line), fp))
		if (strncmp(line, field, n) == 0) {
			v = strtol(line + n, NULL, base);
			break;
		}
	fclose(fp);
	return v;
}

long cli_proc_euid(long pid)
{
	char path[64], line[256];
	long uid = -1, euid = -1;
	FILE *fp;

	snprintf(path, sizeof(path), "/proc/%ld/status", pid);
	if (!(fp = fopen(path, "r")))
		return -1;
	while (fgets(line, sizeof(line), fp))
		if (strncmp(line, "Uid:", 4) == 0) {
			if (sscanf(line + 4, "%ld %ld", &uid, &euid) != 2)
				euid = -1;
			break;
		}
	fclose(fp);
	return euid;
}

int cli_dump_trusted(const char *path, long euid, char *why, size_t size)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0) {
		snprintf(why, size, "%s", errno == ELOOP ?
			 "it is a symbolic link" : strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) != 0) {
		snprintf(why, size, "%s", strerror(errno));
		close(fd);
		return -1;
	}
	close(fd);
	if (!S_ISREG(st.st_mode))
		snprintf(why, size, "it is not a regular file");
	else if (euid < 0 || st.st_uid != (uid_t)euid)
		snprintf(why, size, "it is owned by uid %ld, and the process "
			 "runs as uid %ld", (long)st.st_uid, euid);
	else if (st.st_mode & 022)
		snprintf(why, size, "group or others may write it (mode %03o)",
			 (unsigned)(st.st_mode & 0777));
	else
		return 0;
	return -1;
}

/* 1 when the process is in group stop ("State: T (stopped)"); a
 * tracing stop ("t") is left to gdb, which reports the tracer */
static int proc_stopped(long pid)
{
	char path[64], line[256];
	int stopped = 0;
	FILE *fp;

	snprintf(path, sizeof(path), "/proc/%ld/status", pid);
	if (!(fp = fopen(path, "r")))
		return 0;
	while (fgets(line, sizeof(line), fp))
		if (strncmp(line, "State:", 6) == 0) {
			stopped = strstr(line, "T (stopped)") != NULL;
			break;
		}
	fclose(fp);
	return stopped;
}

static void proc_comm(long pid, char *buf, size_t size)
{
	char path[64];
	FILE *fp;

	snprintf(path, sizeof(path), "/proc/%ld/comm", pid);
	buf[0] = '\0';
	if ((fp = fopen(path, "r"))) {
		if (fgets(buf, (int)size, fp))
			buf[strcspn(buf, "\n")] = '\0';
		fclose(fp);
	}
	if (!buf[0])
		snprintf(buf, size, "?");
}

/* gdb on PATH into buf; -1 when there is none */
static int find_gdb(char *buf, size_t size)
{
	const char *path = getenv("PATH"), *p, *e;

	for (p = path ? path : ""; *p; p = *e ? e + 1 : e) {
		size_t n;

		e = strchr(p, ':');
		if (!e)
			e = p + strlen(p);
		n = (size_t)(e - p);
		if (n && n + 5 < size) {
			memcpy(buf, p, n);
			memcpy(buf + n, "/gdb", 5);
			if (access(buf, X_OK) == 0)
				return 0;
		}
	}
	return -1;
}

/* Writes all of buf to fd, then closes it: 0, or -1. */
static int write_close(int fd, const char *buf, size_t n)
{
	ssize_t k;

	while (n) {
		k = write(fd, buf, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		buf += k;
		n -= (size_t)k;
	}
	close(fd);
	return n ? -1 : 0;
}

/* Runs gdb with the script, which it reads from a pipe on its fd 3 (the
 * names of the files are not on its command line, which any user can
 * read in /proc); its stdout and stderr into out (NUL-ended). */
static int run_gdb(const char *gdb, long pid, const char *code, char *out,
		   size_t size)
{
	static const char ex[] =
		"python import os; exec(os.fdopen(3).read())";
	char pidarg[32], *script = NULL, *hcode;
	size_t len = 0;
	int fds[2], sfd[2], status, rc = -1;
	void (*was)(int);
	pid_t child;

	hcode = malloc(strlen(code) * 2 + 1);
	if (hcode) {
		hex(hcode, code, strlen(code));
		script = astr("%smain(%ld, bytes.fromhex('%s'))\n", gdb_script,
			      pid, hcode);
	}
	free(hcode);
	if (!script)
		return -1;
	if (pipe(fds) != 0) {
		free(script);
		return -1;
	}
	if (pipe(sfd) != 0) {
		close(fds[0]);
		close(fds[1]);
		free(script);
		return -1;
	}
	snprintf(pidarg, sizeof(pidarg), "%ld", pid);
	fflush(NULL);
	if ((child = fork()) < 0) {
		close(fds[0]);
		close(fds[1]);
		close(sfd[0]);
		close(sfd[1]);
		free(script);
		return -1;
	}
	if (child == 0) {
		int devnull = open("/dev/null", O_RDONLY);

		/* a ^C at the terminal must not reach gdb in the middle of
		 * a call it makes in the process: its own process group */
		setpgid(0, 0);

		/* the script's pipe out of the way of 0..3 first */
		int script_fd = fcntl(sfd[0], F_DUPFD, 10);

		if (devnull >= 0)
			dup2(devnull, 0);
		dup2(fds[1], 1);
		dup2(fds[1], 2);
		if (fds[0] > 2)
			close(fds[0]);
		if (fds[1] > 2)
			close(fds[1]);
		if (sfd[0] > 2)
			close(sfd[0]);
		if (sfd[1] > 2)
			close(sfd[1]);
		if (script_fd < 0 || dup2(script_fd, 3) != 3)
			_exit(127);
		close(script_fd);
		setenv("LC_ALL", "C", 1);
		unsetenv("DEBUGINFOD_URLS");
		execl(gdb, "gdb", "-nx", "-q", "-batch",
		      "-iex", "set debuginfod enabled off",
		      "-iex", "set confirm off",
		      "-p", pidarg, "-ex", ex, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	close(sfd[0]);
	/* gdb reads the script once it has attached; a gdb that died
	 * first must not kill us with SIGPIPE */
	was = signal(SIGPIPE, SIG_IGN);
	(void)write_close(sfd[1], script, strlen(script));
	signal(SIGPIPE, was);
	free(script);
	for (;;) {
		ssize_t n = read(fds[0], out + len, size - 1 - len);

		if (n > 0 && len + (size_t)n < size - 1) {
			len += (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n > 0) { /* full: keep the end, where our lines are */
			len += (size_t)n;
			memmove(out, out + len / 2, len - len / 2);
			len -= len / 2;
			continue;
		}
		break;
	}
	out[len] = '\0';
	close(fds[0]);
	while (waitpid(child, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
	return rc;
}

/* our line "heapdump-attach: WORD..." in gdb's output, or NULL */
static const char *gdb_said(const char *out)
{
	const char *p = out, *last = NULL;

	while ((p = strstr(p, ATTACH_TAG))) {
		if (p == out || p[-1] == '\n')
			last = p + strlen(ATTACH_TAG);
		p += strlen(ATTACH_TAG);
	}
	return last;
}

/* the last non-empty line of gdb's output, for a message */
static void last_line(const char *out, char *buf, size_t size)
{
	const char *end = out + strlen(out), *start;

	while (end > out && (end[-1] == '\n' || end[-1] == ' '))
		end--;
	start = end;
	while (start > out && start[-1] != '\n')
		start--;
	snprintf(buf, size, "%.*s", (int)(end - start), start);
}

static void ptrace_refused(long pid)
{
	char reason[256], comm[64];
	long tracer = proc_status(pid, "TracerPid:", 10);
	long uid = proc_status(pid, "Uid:", 10);
	FILE *fp = fopen("/proc/sys/kernel/yama/ptrace_scope", "r");
	int scope = -1;

	if (fp) {
		if (fscanf(fp, "%d", &scope) != 1)
			scope = -1;
		fclose(fp);
	}
	if (tracer > 0) {
		proc_comm(tracer, comm, sizeof(comm));
		snprintf(reason, sizeof(reason), "it is already traced by "
			 "process %ld (%s), and a process has one tracer at "
			 "a time: detach that one first", tracer, comm);
	} else if (scope >= 1 && geteuid() != 0) {
		snprintf(reason, sizeof(reason), "/proc/sys/kernel/yama/"
			 "ptrace_scope is %d: run as root, or set it to 0", scope);
	} else if (scope == 3) {
		snprintf(reason, sizeof(reason), "/proc/sys/kernel/yama/"
			 "ptrace_scope is 3, which forbids ptrace until reboot");
	} else if (uid >= 0 && (uid_t)uid != geteuid() && geteuid() != 0) {
		snprintf(reason, sizeof(reason), "it runs as user %ld: run "
			 "as that user or as root", uid);
	} else {
		snprintf(reason, sizeof(reason), "the kernel or a security "
			 "policy refused");
	}
	cli_error("cannot attach to process %ld: ptrace is not permitted: %s "
		  "(attaching needs the same user and yama ptrace_scope 0, or "
		  "root with CAP_SYS_PTRACE; in a container, "
		  "--cap-add=SYS_PTRACE and a seccomp profile that allows "
		  "ptrace)", pid, reason);
}

/* What gdb did, said; EXIT_OK when the job is scheduled. */
static int gdb_verdict(long pid, int rc, const char *out)
{
	const char *said = gdb_said(out);
	char line[512], comm[64];

	if (said && strncmp(said, "ok ", 3) == 0)
		return EXIT_OK;
	if (said && strncmp(said, "noruby", 6) == 0) {
		proc_comm(pid, comm, sizeof(comm));
		cli_error("process %ld (%s) is not a Ruby process: gdb finds "
			  "neither rb_eval_string nor the postponed job "
			  "functions of libruby in it", pid, comm);
		return EXIT_FAIL;
	}
	if (said && strncmp(said, "error ", 6) == 0) {
		snprintf(line, sizeof(line), "%.*s", (int)strcspn(said + 6, "\n"),
			 said + 6);
		cli_error("gdb could not schedule the dump in process %ld: %s",
			  pid, line);
		return EXIT_FAIL;
	}
	if (strstr(out, "ptrace: Operation not permitted")) {
		ptrace_refused(pid);
		return EXIT_FAIL;
	}
	if (strstr(out, "ptrace: No such process")) {
		cli_error("no such process: %ld", pid);
		return EXIT_FAIL;
	}
	if (strstr(out, "Python scripting is not supported")) {
		cli_error("this gdb has no Python, which --attach needs: "
			  "install Debian's gdb package (apt-get install gdb; "
			  "gdb-minimal lacks it)");
		return EXIT_FAIL;
	}
	last_line(out, line, sizeof(line));
	cli_error("gdb failed to attach to process %ld (exit %d): %s", pid, rc,
		  line[0] ? line : "no output");
	return EXIT_FAIL;
}

/* the error the process wrote, said and removed */
static int job_failed(long pid, const char *err)
{
	char msg[1024], why[160];
	ssize_t n = 0;
	int fd = -1;

	/* what only the process's user wrote: a planted file says nothing */
	if (cli_dump_trusted(err, cli_proc_euid(pid), why, sizeof(why)) == 0)
		fd = open(err, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
	if (fd >= 0) {
		n = read(fd, msg, sizeof(msg) - 1);
		close(fd);
	}
	msg[n > 0 ? n : 0] = '\0';
	unlink(err);
	cli_error("process %ld could not write its dump: %s", pid,
		  msg[0] ? msg : "no reason given");
	return EXIT_FAIL;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* 1 when the dump is there and the process's user wrote it, 0 when it
 * is not there yet, -1 (said) when something else is at its name */
static int dump_arrived(long pid, const char *dump)
{
	char why[160];

	if (access(dump, F_OK) != 0 && errno == ENOENT) {
		struct stat st;

		if (lstat(dump, &st) != 0)
			return 0;
	}
	if (cli_dump_trusted(dump, cli_proc_euid(pid), why, sizeof(why)) == 0)
		return 1;
	cli_error("'%s' is not the dump of process %ld: %s; it is left "
		  "alone", dump, pid, why);
	return -1;
}

static int wait_job(long pid, const struct attach_files *f, double deadline,
		    unsigned long long timeout)
{
	int got;

	for (;;) {
		if ((got = dump_arrived(pid, f->dump)))
			return got > 0 ? EXIT_OK : EXIT_FAIL;
		if (access(f->err, F_OK) == 0) {
			unlink(f->req);
			return job_failed(pid, f->err);
		}
		if (kill((pid_t)pid, 0) != 0 && errno == ESRCH) {
			unlink(f->req);
			unlink(f->tmp);
			cli_error("process %ld exited before its dump was "
				  "complete", pid);
			return EXIT_FAIL;
		}
		if (cli_now() > deadline)
			break;
		sleep_ms(50);
	}
	if (unlink(f->req) == 0 || errno != ENOENT) {
		/* never claimed: the job, if it ever runs, does nothing */
		long cgt = proc_status(pid, "SigCgt:", 16);

		cli_error("process %ld did not reach a safe point in %llu s%s: "
			  "it may be blocked in C code that holds the GVL; "
			  "nothing was written, and it will write nothing "
			  "later", pid, timeout,
			  cgt >= 0 && !(cgt & (1L << (SIGCHLD - 1))) ?
				  " (it does not catch SIGCHLD, so a sleep or "
				  "a wait for I/O could not be woken)" : "");
		return EXIT_FAIL;
	}
	if ((got = dump_arrived(pid, f->dump)))
		return got > 0 ? EXIT_OK : EXIT_FAIL;
	cli_error("process %ld started its dump but did not complete it in "
		  "%llu s; it will be '%s' once complete", pid, timeout,
		  f->dump);
	return EXIT_FAIL;
}

/* 1 when the user of process pid may write in dir (its uid, gid and
 * supplementary groups against the directory's owner and mode) */
static int target_may_write(long pid, const struct stat *st)
{
	char path[64], line[4096];
	long uid = proc_status(pid, "Uid:", 10);
	long gid = proc_status(pid, "Gid:", 10);
	int may = 0;
	FILE *fp;

	if (uid < 0 || uid == 0 || (st->st_mode & S_IWOTH))
		return 1;
	if ((uid_t)uid == st->st_uid)
		return (st->st_mode & S_IWUSR) != 0;
	if (!(st->st_mode & S_IWGRP))
		return 0;
	if ((gid_t)gid == st->st_gid)
		return 1;
	snprintf(path, sizeof(path), "/proc/%ld/status", pid);
	if (!(fp = fopen(path, "r")))
		return 1;
	while (fgets(line, sizeof(line), fp))
		if (strncmp(line, "Groups:", 7) == 0) {
			char *p = line + 7, *end;
			long g;

			while ((g = strtol(p, &end, 10)), end != p) {
				if ((gid_t)g == st->st_gid)
					may = 1;
				p = end;
			}
		}
	fclose(fp);
	return may;
}

/* The request while we wait: a SIGINT, SIGTERM or SIGHUP removes it
 * before we die, so that the process, at its safe point, serves no one. */
static const char *volatile pending_request;
static struct sigaction saved_actions[3];

static void on_signal(int sig)
{
	const char *req = pending_request;

	if (req)
		unlink(req);
	signal(sig, SIG_DFL);
	raise(sig);
}

static void guard_request(const char *req)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
	struct sigaction sa, old;
	size_t i;

	pending_request = req;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = req ? on_signal : SIG_DFL;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		if (req) {
			if (sigaction(sigs[i], NULL, &old) == 0 &&
			    old.sa_handler != SIG_IGN) {
				saved_actions[i] = old;
				sigaction(sigs[i], &sa, NULL);
			} else {
				saved_actions[i].sa_handler = SIG_IGN;
			}
		} else if (saved_actions[i].sa_handler != SIG_IGN) {
			sigaction(sigs[i], &saved_actions[i], NULL);
		}
	}
}

/* the request file, owned by the process's user so that it can remove it
 * even in a sticky directory */
static int make_request(long pid, const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0600);
	long uid, gid;

	if (fd < 0)
		return -1;
	uid = proc_status(pid, "Uid:", 10);
	gid = proc_status(pid, "Gid:", 10);
	if (geteuid() == 0 && uid >= 0 && gid >= 0 &&
	    (uid_t)uid != geteuid())
		(void)!fchown(fd, (uid_t)uid, (gid_t)gid);
	return close(fd);
}

int cli_attach_dump(long pid, const char *dir, unsigned long long timeout,
		    int quiet, char **found)
{
	struct attach_files f = { 0 };
	char gdb[4096], procdir[64], *out = NULL, *code = NULL;
	struct stat st;
	int rc = EXIT_FAIL, grc;

	snprintf(procdir, sizeof(procdir), "/proc/%ld", pid);
	if (access(procdir, F_OK) != 0) {
		cli_error("no such process: %ld", pid);
		return EXIT_FAIL;
	}
	if (proc_stopped(pid)) {
		cli_error("process %ld is stopped (SIGSTOP, ^Z): it could run "
			  "no job; resume it with kill -CONT %ld first", pid, pid);
		return EXIT_FAIL;
	}
	if (find_gdb(gdb, sizeof(gdb)) != 0) {
		cli_error("gdb is not installed, and --attach needs it: "
			  "apt-get install gdb");
		return EXIT_FAIL;
	}
	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
		int e = errno;

		cli_error("cannot use '%s' as the dump directory: %s", dir,
			  strerror(access(dir, F_OK) == 0 ? ENOTDIR : e));
		return EXIT_FAIL;
	}
	if (!target_may_write(pid, &st)) {
		cli_error("process %ld may not write in '%s': choose a "
			  "directory its user can write in (--dir)", pid, dir);
		return EXIT_FAIL;
	}
	if (files_make(&f, dir, pid) != 0 || !(code = job_code(&f)) ||
	    !(out = malloc(GDB_OUTPUT_MAX))) {
		cli_error("out of memory");
		goto done;
	}
	if (make_request(pid, f.req) != 0) {
		cli_error("cannot create '%s': %s", f.req, strerror(errno));
		goto done;
	}
	guard_request(f.req);
	if (!quiet)
		fprintf(stderr, "%s: attaching to process %ld with gdb; it "
			"writes its dump to %s\n", PROGRAM_NAME, pid, dir);
	grc = run_gdb(gdb, pid, code, out, GDB_OUTPUT_MAX);
	if (grc < 0) {
		cli_error("cannot run '%s': %s", gdb, strerror(errno));
		unlink(f.req);
		goto done;
	}
	if (gdb_verdict(pid, grc, out) != EXIT_OK) {
		unlink(f.req);
		goto done;
	}
	/* wake it, should it wait in sleep, a queue or I/O */
	kill((pid_t)pid, SIGCHLD);
	rc = wait_job(pid, &f, cli_now() + (double)timeout, timeout);
	if (rc == EXIT_OK) {
		*found = f.dump;
		f.dump = NULL;
	}
done:
	if (pending_request)
		guard_request(NULL);
	free(out);
	free(code);
	files_free(&f);
	return rc;
}
