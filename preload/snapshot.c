/*
 * preload/snapshot.c - when and how libheapdump-malloc.so writes its
 * snapshots (man 5 heapdump-malloc; preload/README.md): the environment
 * (HEAPDUMP_MALLOC_DIR, _EVERY, _SIGNAL, _AT_EXIT, _LEAKS), the snapshot
 * thread (an interval, and a signal whose handler only wakes it), the
 * exit snapshot (a Ruby end proc registered through a postponed job, so
 * that it runs before the VM is torn down; atexit elsewhere), fork
 * handlers, and the exported entry points hd_malloc_snapshot,
 * hd_malloc_active and hd_malloc_next_path.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <malloc.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "hdm.h"

#define HDM_EXPORT __attribute__((visibility("default")))

static char snap_dir[PATH_MAX - 64];
static double every;	    /* seconds; 0: none */
static int signo = SIGUSR2; /* 0: none */
static int at_exit = 1;
static int leaks_each;
static unsigned seq;
static pthread_mutex_t snap_lock = PTHREAD_MUTEX_INITIALIZER;
static sem_t wake;
static volatile sig_atomic_t signalled;
static volatile int stopping, thread_up, finished, end_registered;
static pthread_t worker;

/* ---- the snapshot ---- */

struct gens {
	uint32_t *oldest;
	uint64_t *sum;
	uint32_t n;
};

static void gen_of(const struct hdm_block *b, void *arg)
{
	struct gens *g = arg;

	if (b->site >= g->n)
		return;
	if (b->gen < g->oldest[b->site])
		g->oldest[b->site] = b->gen;
	g->sum[b->site] += b->gen;
}

static void key_u64(struct hdm_out *o, const char *key, uint64_t v)
{
	hdm_out_str(o, key);
	hdm_out_u64(o, v);
}

static void key_i64(struct hdm_out *o, const char *key, int64_t v)
{
	hdm_out_str(o, key);
	hdm_out_i64(o, v < 0 ? 0 : v);
}

static long rss_bytes(void)
{
	char buf[128];
	long pages = -1, rss = -1;
	int fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	if (sscanf(buf, "%ld %ld", &pages, &rss) != 2)
		return -1;
	return rss * sysconf(_SC_PAGESIZE);
}

/* the name of a C site: object:symbol+0xOFF, object+0xOFF or 0xADDR */
static void c_name(uintptr_t addr, char *buf, size_t len)
{
	Dl_info info;
	const char *base;

	if (!dladdr((void *)addr, &info) || !info.dli_fname ||
	    !*info.dli_fname) {
		snprintf(buf, len, "0x%lx", (unsigned long)addr);
		return;
	}
	base = strrchr(info.dli_fname, '/');
	base = base ? base + 1 : info.dli_fname;
	if (info.dli_sname && info.dli_saddr)
		snprintf(buf, len, "%s:%s+0x%lx", base, info.dli_sname,
			 (unsigned long)(addr - (uintptr_t)info.dli_saddr));
	else
		snprintf(buf, len, "%s+0x%lx", base,
			 (unsigned long)(addr - (uintptr_t)info.dli_fbase));
}

/* every site's name, in one mapping: names[i] (the leak scan's child uses them too) */
struct names {
	const char **names;
	char *text;
	size_t bytes;
};

static int names_make(struct names *nm, uint32_t n)
{
	size_t i, off = 0,
		  cap = (size_t)n * sizeof(char *) + (size_t)n * 64 + 4096;

	nm->bytes = cap;
	if (!(nm->names = hdm_map(cap)))
		return -1;
	nm->text = (char *)(nm->names + n);
	cap -= (size_t)n * sizeof(char *);
	for (i = 0; i < n; i++) {
		struct hdm_site *s = hdm_site_at((uint32_t)i);
		char tmp[PATH_MAX + 32];
		size_t k;

		if (s->kind == HDM_KIND_RUBY)
			snprintf(tmp, sizeof tmp, "%s:%d", s->file, s->line);
		else
			c_name(s->caller, tmp, sizeof tmp);
		k = strlen(tmp) + 1;
		if (off + k > cap) {
			/* long Ruby paths: a larger mapping, start over */
			hdm_unmap(nm->names, nm->bytes);
			nm->bytes = nm->bytes * 2 + k * n;
			if (!(nm->names = hdm_map(nm->bytes)))
				return -1;
			nm->text = (char *)(nm->names + n);
			cap = nm->bytes - (size_t)n * sizeof(char *);
			off = 0;
			i = (size_t)-1;
			continue;
		}
		memcpy(nm->text + off, tmp, k);
		nm->names[i] = nm->text + off;
		off += k;
	}
	return 0;
}

static int ruby_alive(void)
{
	return hdm_ruby.has_gvl && hdm_state == HDM_TRACKING;
}

static void write_header(struct hdm_out *o, const char *reason, uint32_t n)
{
	struct timespec ts;
	uint64_t t[5] = { 0, 0, 0, 0, 0 };
	size_t gc = hdm_gc_last;
	uint32_t i;
	long rss = rss_bytes();

	clock_gettime(CLOCK_REALTIME, &ts);
	if (ruby_alive() && hdm_ruby.has_gvl())
		gc = hdm_ruby.gc_count();
	hdm_out_str(o, "{\"type\":\"malloc_snapshot\",\"format\":1,\"pid\":");
	hdm_out_i64(o, (int64_t)getpid());
	hdm_out_str(o, ",\"time\":");
	hdm_out_double(o, (double)ts.tv_sec + ts.tv_nsec / 1e9, 3);
	hdm_out_str(o, ",\"ruby\":");
	if (hdm_ruby.version)
		hdm_out_json(o, hdm_ruby.version);
	else
		hdm_out_str(o, "null");
	hdm_out_str(o, ",\"allocator\":");
	hdm_out_json(o, hdm_allocator);
	hdm_out_str(o, hdm_state != HDM_OFF ? ",\"tracking\":true" :
					      ",\"tracking\":false,\"why\":");
	if (hdm_state == HDM_OFF)
		hdm_out_json(o, hdm_why[0] ? hdm_why : "initialisation failed");
	hdm_out_str(o, ",\"reason\":");
	hdm_out_json(o, reason);
	if (hdm_state != HDM_OFF) {
		for (i = 0; i < n; i++) {
			struct hdm_site *s = hdm_site_at(i);
			int64_t lb, ln;

			hdm_site_live(s, &lb, &ln);
			t[0] += __atomic_load_n(&s->allocs, __ATOMIC_RELAXED);
			t[1] += __atomic_load_n(&s->frees, __ATOMIC_RELAXED);
			t[2] += __atomic_load_n(&s->bytes_allocated,
						__ATOMIC_RELAXED);
			t[3] += (uint64_t)lb;
			t[4] += (uint64_t)ln;
		}
		if (hdm_ruby.version)
			key_u64(o, ",\"gc_count\":", gc);
		key_u64(o, ",\"totals\":{\"allocs\":", t[0]);
		key_u64(o, ",\"frees\":", t[1]);
		key_u64(o, ",\"bytes_allocated\":", t[2]);
		key_i64(o, ",\"live_bytes\":", (int64_t)t[3]);
		key_i64(o, ",\"live_blocks\":", (int64_t)t[4]);
		hdm_out_str(o, "}");
	}
	if (strcmp(hdm_allocator, "glibc") == 0) {
		struct mallinfo2 (*mi2)(void) = (struct mallinfo2(*)(
			void))dlsym(RTLD_DEFAULT, "mallinfo2");

		if (mi2) {
			struct mallinfo2 m = mi2();

			key_u64(o, ",\"malloc\":{\"in_use\":", m.uordblks);
			key_u64(o, ",\"free\":", m.fordblks);
			hdm_out_str(o, "}");
		}
	}
	if (rss >= 0)
		key_u64(o, ",\"rss\":", (uint64_t)rss);
	hdm_out_str(o, "}\n");
}

static void write_sites(struct hdm_out *o, const struct names *nm, uint32_t n)
{
	struct gens g;
	uint32_t i;
	size_t bytes = (size_t)n * (sizeof *g.oldest + sizeof *g.sum);
	char *mem = n ? hdm_map(bytes) : NULL;

	g.n = mem ? n : 0;
	g.sum = (uint64_t *)mem;
	g.oldest = (uint32_t *)(mem + (size_t)n * sizeof *g.sum);
	for (i = 0; i < g.n; i++)
		g.oldest[i] = UINT32_MAX;
	if (g.n)
		hdm_block_each(gen_of, &g);
	for (i = 0; i < n; i++) {
		struct hdm_site *s = hdm_site_at(i);
		int64_t live, live_bytes;

		hdm_site_live(s, &live_bytes, &live);

		hdm_out_str(o, "{\"type\":\"site\",\"site\":");
		hdm_out_json(o, nm->names[i]);
		hdm_out_str(o, s->kind == HDM_KIND_RUBY ? ",\"kind\":\"ruby\"" :
							  ",\"kind\":\"c\"");
		key_u64(o, ",\"allocs\":",
			__atomic_load_n(&s->allocs, __ATOMIC_RELAXED));
		key_u64(o, ",\"frees\":",
			__atomic_load_n(&s->frees, __ATOMIC_RELAXED));
		key_u64(o, ",\"bytes_allocated\":",
			__atomic_load_n(&s->bytes_allocated, __ATOMIC_RELAXED));
		key_i64(o, ",\"live_bytes\":", live_bytes);
		key_i64(o, ",\"live_blocks\":", live);
		if (live > 0 && i < g.n && g.oldest[i] != UINT32_MAX) {
			key_u64(o, ",\"gen_oldest\":", g.oldest[i]);
			hdm_out_str(o, ",\"gen_mean\":");
			hdm_out_double(o, (double)g.sum[i] / (double)live, 1);
		}
		hdm_out_str(o, "}\n");
	}
	hdm_unmap(mem, bytes);
}

/* the leak scan in a forked child writing to fd; 0 when it ran */
static int run_leakscan(int fd, const struct names *nm, uint32_t n)
{
	pid_t pid = fork(), w;
	int st;

	if (pid < 0)
		return -1;
	if (pid == 0)
		_exit(hdm_leakscan_child(fd, nm->names, n) == 0 ? 0 : 1);
	while ((w = waitpid(pid, &st, 0)) < 0 && errno == EINTR)
		;
	if (w < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		errno = EIO;
		return -1;
	}
	return 0;
}

static int snapshot_locked(const char *path, const char *reason, int leakscan)
{
	char tmp[PATH_MAX];
	struct hdm_out *o;
	struct names nm = { NULL, NULL, 0 };
	uint32_t n = hdm_state != HDM_OFF ? hdm_site_count() : 0;
	int fd, rc = 0, e = 0;

	if (snprintf(tmp, sizeof tmp, "%s.XXXXXX", path) >= (int)sizeof tmp) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if (!(o = hdm_map(sizeof *o)))
		return -1;
	if ((fd = mkostemp(tmp, O_CLOEXEC)) < 0) {
		e = errno;
		hdm_unmap(o, sizeof *o);
		errno = e;
		return -1;
	}
	hdm_out_init(o, fd);
	if (n && names_make(&nm, n) < 0)
		n = 0;
	write_header(o, reason, n);
	if (hdm_state != HDM_OFF)
		write_sites(o, &nm, n);
	rc = hdm_out_flush(o);
	e = o->err;
	if (rc == 0 && leakscan && hdm_state != HDM_OFF &&
	    run_leakscan(fd, &nm, n) < 0) {
		rc = -1;
		e = errno;
	}
	if (close(fd) < 0 && rc == 0) {
		rc = -1;
		e = errno;
	}
	if (rc == 0 && rename(tmp, path) < 0) {
		rc = -1;
		e = errno;
	}
	if (rc < 0)
		unlink(tmp);
	hdm_unmap(nm.names, nm.bytes);
	hdm_unmap(o, sizeof *o);
	errno = e;
	return rc;
}

int hdm_write_snapshot(const char *path, const char *reason, int leakscan)
{
	int saved = hdm_guard, rc;

	hdm_guard = 1;
	pthread_mutex_lock(&snap_lock);
	rc = snapshot_locked(path, reason, leakscan);
	pthread_mutex_unlock(&snap_lock);
	hdm_guard = saved;
	return rc;
}

static int next_path(char *buf, size_t len)
{
	unsigned k = __atomic_add_fetch(&seq, 1, __ATOMIC_RELAXED);

	if ((size_t)snprintf(buf, len, "%s/heapdump-malloc-%ld-%04u.ndjson",
			     snap_dir, (long)getpid(), k) >= len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

/* a snapshot by the rules of the environment (its default name) */
static void snapshot_now(const char *reason)
{
	char path[PATH_MAX];

	if (next_path(path, sizeof path) == 0 &&
	    hdm_write_snapshot(path, reason, leaks_each) < 0) {
		int saved = hdm_guard;

		hdm_guard = 1;
		fprintf(stderr, "heapdump-malloc: cannot write %s: %s\n", path,
			strerror(errno));
		hdm_guard = saved;
	}
}

/* ---- exported ---- */

HDM_EXPORT int hd_malloc_snapshot(const char *path, const char *reason,
				  int leakscan);
HDM_EXPORT int hd_malloc_active(void);
HDM_EXPORT int hd_malloc_next_path(char *buf, size_t len);

int hd_malloc_snapshot(const char *path, const char *reason, int leakscan)
{
	char def[PATH_MAX];

	if (!path) {
		if (next_path(def, sizeof def) < 0)
			return -1;
		path = def;
	}
	return hdm_write_snapshot(path, reason ? reason : "api", leakscan);
}

int hd_malloc_active(void)
{
	return hdm_state == HDM_TRACKING;
}

int hd_malloc_next_path(char *buf, size_t len)
{
	return next_path(buf, len);
}

/* ---- the exit: before Ruby's VM goes ---- */

/* the exit snapshot, once; then a pass-through */
static void finish(int ruby_ok)
{
	int zero = 0;

	if (!__atomic_compare_exchange_n(&finished, &zero, 1, 0,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return;
	if (!ruby_ok)
		hdm_ruby.has_gvl =
			NULL; /* the VM may be gone: never call it again */
	if (at_exit)
		snapshot_now("exit");
	hdm_state = hdm_state == HDM_TRACKING ? HDM_STOPPED : hdm_state;
	stopping = 1;
	if (thread_up)
		sem_post(&wake);
}

static void end_proc(unsigned long data)
{
	(void)data;
	finish(1);
}

/* a postponed job: runs with the GVL at a safe point, registers the end
 * proc (which Ruby runs with the at_exit blocks, before its teardown) */
static void end_job(void *data)
{
	void (*set_end_proc)(void (*)(unsigned long), unsigned long) =
		(void (*)(void (*)(unsigned long),
			  unsigned long))dlsym(RTLD_DEFAULT, "rb_set_end_proc");
	int saved = hdm_guard;

	(void)data;
	hdm_guard = 1;
	if (set_end_proc)
		set_end_proc(end_proc, 0);
	hdm_guard = saved;
}

/* called by the first allocation under the GVL with a Ruby frame */
void hdm_ruby_seen(void)
{
	int zero = 0;
	unsigned (*prereg)(unsigned, void (*)(void *), void *);
	void (*trigger)(unsigned);
	int (*reg_one)(unsigned, void (*)(void *), void *);

	if (end_registered ||
	    !__atomic_compare_exchange_n(&end_registered, &zero, 1, 0,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return;
	prereg = (unsigned (*)(unsigned, void (*)(void *),
			       void *))dlsym(RTLD_DEFAULT,
					     "rb_postponed_job_preregister");
	trigger = (void (*)(unsigned))dlsym(RTLD_DEFAULT,
					    "rb_postponed_job_trigger");
	reg_one = (int (*)(unsigned, void (*)(void *),
			   void *))dlsym(RTLD_DEFAULT,
					 "rb_postponed_job_register_one");
	if (prereg && trigger) {
		unsigned h = prereg(0, end_job, NULL);

		if (h != UINT_MAX)
			trigger(h);
	} else if (reg_one) {
		reg_one(0, end_job, NULL);
	}
}

static void at_exit_handler(void)
{
	/* in Ruby the end proc came first; here the VM may be gone */
	finish(!hdm_ruby.has_gvl);
}

__attribute__((destructor)) static void hdm_destructor(void)
{
	finish(!hdm_ruby.has_gvl);
}

/* ---- the snapshot thread ---- */

static void on_signal(int sig)
{
	int e = errno;

	(void)sig;
	signalled = 1;
	sem_post(&wake);
	errno = e;
}

static void *worker_main(void *arg)
{
	struct timespec next;

	(void)arg;
	hdm_guard = 1; /* nothing this thread allocates is tracked */
	clock_gettime(CLOCK_REALTIME, &next);
	for (;;) {
		int rc;

		if (every > 0) {
			double t = (double)next.tv_sec + next.tv_nsec / 1e9 +
				   every;

			next.tv_sec = (time_t)t;
			next.tv_nsec = (long)((t - (double)next.tv_sec) * 1e9);
			while ((rc = sem_timedwait(&wake, &next)) < 0 &&
			       errno == EINTR)
				;
		} else {
			while ((rc = sem_wait(&wake)) < 0 && errno == EINTR)
				;
		}
		if (stopping)
			break;
		if (signalled) {
			signalled = 0;
			snapshot_now("signal");
		} else if (rc < 0 && errno == ETIMEDOUT) {
			snapshot_now("interval");
		}
	}
	return NULL;
}

static int parse_signal(const char *s)
{
	static const struct {
		const char *name;
		int no;
	} sigs[] = { { "USR1", SIGUSR1 }, { "USR2", SIGUSR2 },
		     { "HUP", SIGHUP },	  { "URG", SIGURG },
		     { "PROF", SIGPROF }, { "WINCH", SIGWINCH },
		     { "TTIN", SIGTTIN }, { "TTOU", SIGTTOU } };
	size_t i;
	char *end;
	long v;

	if (strcasecmp(s, "none") == 0 || !*s)
		return 0;
	if (strncasecmp(s, "SIG", 3) == 0)
		s += 3;
	for (i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
		if (strcasecmp(s, sigs[i].name) == 0)
			return sigs[i].no;
	v = strtol(s, &end, 10);
	if (*end || v <= 0 || v >= NSIG)
		return -1;
	return (int)v;
}

static void read_env(void)
{
	const char *d = getenv("HEAPDUMP_MALLOC_DIR"), *v;

	if (!d || !*d)
		d = getenv("TMPDIR");
	if (!d || !*d)
		d = "/tmp";
	snprintf(snap_dir, sizeof snap_dir, "%s", d);
	if ((v = getenv("HEAPDUMP_MALLOC_EVERY")) && *v) {
		char *end;
		double t = strtod(v, &end);

		if (*end || !(t > 0) || t > 1e9)
			fprintf(stderr,
				"heapdump-malloc: HEAPDUMP_MALLOC_EVERY='%s' is not a number of seconds: ignored\n",
				v);
		else
			every = t;
	}
	if ((v = getenv("HEAPDUMP_MALLOC_SIGNAL"))) {
		int s = parse_signal(v);

		if (s < 0)
			fprintf(stderr,
				"heapdump-malloc: HEAPDUMP_MALLOC_SIGNAL='%s' is no signal (USR1, USR2, ..., none): USR2\n",
				v);
		else
			signo = s;
	}
	if ((v = getenv("HEAPDUMP_MALLOC_AT_EXIT")) && strcmp(v, "0") == 0)
		at_exit = 0;
	if ((v = getenv("HEAPDUMP_MALLOC_LEAKS")) && strcmp(v, "1") == 0)
		leaks_each = 1;
}

static void fork_prepare(void)
{
	hdm_table_lock_all();
}

static void fork_parent(void)
{
	hdm_table_unlock_all();
}

static void fork_child(void)
{
	hdm_table_reset_locks();
	pthread_mutex_init(&snap_lock, NULL);
	seq = 0;
	thread_up = 0; /* the snapshot thread stays in the parent */
}

void hdm_start(void)
{
	int saved = hdm_guard;
	static int started;

	if (started)
		return;
	started = 1;
	hdm_guard = 1;
	read_env();
	if (hdm_state == HDM_OFF && hdm_why[0])
		fprintf(stderr, "heapdump-malloc: %s: tracking nothing\n",
			hdm_why);
	pthread_atfork(fork_prepare, fork_parent, fork_child);
	atexit(at_exit_handler);
	if (sem_init(&wake, 0, 0) == 0 && (every > 0 || signo > 0)) {
		sigset_t all, old;

		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		thread_up = pthread_create(&worker, NULL, worker_main, NULL) ==
			    0;
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		if (thread_up) {
			pthread_detach(worker);
			if (signo > 0) {
				struct sigaction sa;

				memset(&sa, 0, sizeof sa);
				sa.sa_handler = on_signal;
				sa.sa_flags = SA_RESTART;
				sigemptyset(&sa.sa_mask);
				sigaction(signo, &sa, NULL);
			}
		}
	}
	hdm_guard = saved;
}
