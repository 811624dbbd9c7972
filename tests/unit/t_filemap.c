/*
 * t_filemap.c - a plain dump file read where it is mapped (filemap.c,
 * reader.c; pscan.c's windows in t_pscan) says what the same bytes read from memory and from
 * a pipe say: every record (its offset, line, type, address, text), the
 * problems and the read stats, the 4 GiB line limit (lowered here)
 * included, with the pages behind each reader dropped every few KiB; the
 * mapping of a reader stays within its window; hd_mapped_path names the
 * file mapped at an address, and nothing once it is unmapped; whether a
 * mapping pays is judged from the pages a touch maps (a large folio, or
 * 64 KiB around: shown here on anonymous memory, whose pages the test
 * decides). A build without mappings (HD_NO_MMAP, the sanitizers') maps
 * nothing, and reads the same. The cases that need a mapping force it
 * (hd__map_policy): how the page cache holds a test's file is the
 * kernel's choice.
 */
#define _GNU_SOURCE
#include "t.h"
#include "hd_int.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#if defined(__linux__) && !defined(HD_NO_MMAP)
#define MAPS 1
#else
#define MAPS 0
#endif

/* ---- inputs ---- */

/* A dump of about size bytes: records of every kind, joins, raw quotes,
 * garbage, a blank run, and lines from 60 bytes to 300 KiB. */
static char *mixed(size_t size, size_t *len_out)
{
	char *buf = malloc(size + 400000);
	size_t len = 0;
	int i;

	if (!buf)
		return NULL;
	len += (size_t)sprintf(buf + len,
		"{\"type\":\"ROOT\", \"root\":\"vm\", \"references\":[\"0x10\"]}\n"
		"{\"address\":\"0x10\", \"type\":\"CLASS\", \"name\":\"Foo\", \"references\":[]}\n");
	for (i = 1; len < size; i++) {
		if (i % 7 == 0)
			len += (size_t)sprintf(buf + len,
				"{\"address\":\"0x%x\", \"type\":\"STRING\", \"value\":\"a\nb\", \"memsize\":40}\n",
				4096 + i);
		else if (i % 13 == 0)
			len += (size_t)sprintf(buf + len,
				"{\"address\":\"0x%x\", \"type\":\"STRING\", \"value\":\"a\"b\", \"memsize\":40}\n",
				4096 + i);
		else if (i % 5003 == 0) {
			/* a line of 300 KiB: past a range buffer */
			len += (size_t)sprintf(buf + len,
				"{\"address\":\"0x%x\", \"type\":\"STRING\", \"value\":\"",
				4096 + i);
			memset(buf + len, 'x', 300000);
			len += 300000;
			len += (size_t)sprintf(buf + len, "\", \"memsize\":300040}\n");
		} else
			len += (size_t)sprintf(buf + len,
				"{\"address\":\"0x%x\", \"type\":\"OBJECT\", \"class\":\"0x10\", \"file\":\"f%d.rb\", \"line\":%d, \"generation\":%d, \"memsize\":%d, \"references\":[\"0x10\", \"0x%x\"]}\n",
				4096 + i, i % 3, i % 4, i % 6, i, 4096 + i - 1);
		if (i % 11 == 0)
			len += (size_t)sprintf(buf + len, "garbage %d\n", i);
		if (i % 997 == 0)
			len += (size_t)sprintf(buf + len, "\n\n\n");
	}
	/* the last line cut short */
	len += (size_t)sprintf(buf + len, "{\"address\":\"0x1\", \"type\":\"OBJ");
	*len_out = len;
	return buf;
}

/* Writes the len bytes of text to fd; 0, or -1. */
static int write_all(int fd, const char *text, size_t len)
{
	size_t done = 0;
	ssize_t k;

	while (done < len && (k = write(fd, text + done, len - done)) > 0)
		done += (size_t)k;
	return done == len ? 0 : -1;
}

static int write_temp(char *path, const char *text, size_t len)
{
	int fd = mkstemp(path), rc;

	if (fd < 0)
		return -1;
	rc = write_all(fd, text, len);
	close(fd);
	return rc;
}

/* ---- what a read says, as text ---- */

struct said {
	char *text;
	size_t len, cap;
};

static void say(struct said *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void say(struct said *s, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (s->cap - s->len < 512) {
		size_t ncap = s->cap ? s->cap * 2 : 1 << 16;
		char *p = realloc(s->text, ncap);

		if (!p)
			return;
		s->text = p;
		s->cap = ncap;
	}
	va_start(ap, fmt);
	n = vsnprintf(s->text + s->len, s->cap - s->len, fmt, ap);
	va_end(ap);
	if (n > 0 && (size_t)n < s->cap - s->len)
		s->len += (size_t)n;
}

static void on_problem(const hd_problem *p, void *payload)
{
	say(payload, "problem %llu:%llu @%llu %d %s\n",
	    (unsigned long long)p->line, (unsigned long long)p->column,
	    (unsigned long long)p->offset, p->repaired, p->msg);
}

/* msg with name, where it appears, said as NAME: a file, a pipe and
 * memory are read under different names. */
static void say_msg(struct said *s, const char *msg, const char *name)
{
	const char *at = *name ? strstr(msg, name) : NULL;

	if (at)
		say(s, "%.*sNAME%s\n", (int)(at - msg), msg, at + strlen(name));
	else
		say(s, "%s\n", msg);
}

/* Every record of r, its problems, its end and its stats into s; name:
 * r's. */
static void read_all(hd_reader *r, const char *name, struct said *s)
{
	const hd_record *rec;
	hd_read_stats rs;
	hd_error err = { 0 };
	int rc;

	while ((rc = hd_reader_next(r, &rec, &err)) == 0) {
		uint32_t sum = 0;
		size_t i;

		for (i = 0; i < rec->text_len; i++)
			sum = sum * 31 + (unsigned char)rec->text[i];
		say(s, "rec @%llu line %llu kind %d type %d addr %llx refs %zu text %zu %08x\n",
		    (unsigned long long)rec->offset,
		    (unsigned long long)rec->lineno, rec->kind, rec->type,
		    (unsigned long long)rec->address, rec->nrefs,
		    rec->text_len, sum);
	}
	say(s, "end %d ", rc);
	say_msg(s, rc == HD_ITEROVER ? "" : err.msg, name);
	hd_reader_stats(&rs, r);
	say(s, "stats lines %llu objects %llu roots %llu blank %llu skipped %llu repaired %llu truncated %d bytes %llu\n",
	    (unsigned long long)rs.lines, (unsigned long long)rs.objects,
	    (unsigned long long)rs.roots, (unsigned long long)rs.blank,
	    (unsigned long long)rs.skipped, (unsigned long long)rs.repaired,
	    rs.truncated, (unsigned long long)rs.bytes);
}

/* What reading path (NULL: the len bytes of text, from memory) says. */
static void said_from(const char *path, const char *text, size_t len,
		      unsigned flags, struct said *s)
{
	hd_read_options o = HD_READ_OPTIONS_INIT;
	hd_reader *r = NULL;
	hd_error err = { 0 };
	int rc;

	o.flags = flags;
	o.problem = on_problem;
	o.payload = s;
	rc = path ? hd_reader_open(&r, path, &o, &err) :
		    hd_reader_open_mem(&r, text, len, &o, &err);
	if (rc) {
		say(s, "open failed: %s\n", err.msg);
		return;
	}
	read_all(r, path ? path : "(memory)", s);
	hd_reader_free(r);
}

static void said_file(const char *path, unsigned flags, struct said *s)
{
	said_from(path, NULL, 0, flags, s);
}

struct feeder {
	int fd;
	const char *text;
	size_t len;
};

static void *feed(void *arg)
{
	struct feeder *f = arg;

	(void)write_all(f->fd, f->text, f->len); /* the reader says less */
	close(f->fd);
	return NULL;
}

/* The same bytes read from a pipe (read(2) into a buffer): the reader
 * is opened on /dev/fd/N. */
static void said_pipe(const char *text, size_t len, unsigned flags,
		      struct said *s)
{
	struct feeder f;
	pthread_t th;
	char path[64];
	int p[2];

	signal(SIGPIPE, SIG_IGN); /* a read that fails stops reading */
	if (pipe(p)) {
		say(s, "no pipe\n");
		return;
	}
	f.fd = p[1];
	f.text = text;
	f.len = len;
	pthread_create(&th, NULL, feed, &f);
	snprintf(path, sizeof(path), "/dev/fd/%d", p[0]);
	said_file(path, flags, s);
	close(p[0]);
	pthread_join(th, NULL);
}

/* The text of the first line where a and b differ, for a failure. */
static const char *first_diff(const struct said *a, const struct said *b)
{
	static char line[200];
	size_t i = 0, start = 0;

	while (i < a->len && i < b->len && a->text[i] == b->text[i])
		if (a->text[i++] == '\n')
			start = i;
	snprintf(line, sizeof(line), "%.90s | %.90s", a->text + start,
		 b->text + start);
	return line;
}

#define SAME(a, b)                                                     \
	do {                                                           \
		if ((a).len != (b).len ||                              \
		    memcmp((a).text, (b).text, (a).len) != 0) {        \
			T_FAIL("differ: %s", first_diff(&(a), &(b)));  \
			return;                                        \
		}                                                      \
	} while (0)

/* ---- the cases ---- */

/* 3 MB read mapped, with windows of 64 KiB (a drop every few hundred
 * records), from memory and from a pipe: the same, lenient and strict. */
static void test_filemap__same_as_memory_and_pipe(void)
{
	char path[] = "/tmp/t_filemap_XXXXXX";
	struct said m = { 0 }, mem = { 0 }, pip = { 0 };
	size_t len, budget = hd__map_budget;
	char *text = mixed((size_t)3 << 20, &len);
	unsigned flags[] = { 0, HD_READ_STRICT };
	size_t k;

	T_ASSERT(text != NULL);
	T_ASSERT(write_temp(path, text, len) == 0);
	hd__map_policy = 1;
	for (k = 0; k < 2; k++) {
		m.len = mem.len = pip.len = 0;
		hd__map_budget = (size_t)64 << 10;
		said_file(path, flags[k], &m);
		said_from(NULL, text, len, flags[k], &mem);
		said_pipe(text, len, flags[k], &pip);
		hd__map_budget = budget;
		SAME(m, mem);
		SAME(m, pip);
		if (k == 0) { /* problems, and the last line cut short */
			T_ASSERT(strstr(m.text, "problem") != NULL);
			T_ASSERT(strstr(m.text, "truncated 1") != NULL);
		} else { /* --strict: the first bad line fails the read */
			T_ASSERT(strstr(m.text, "end -") != NULL);
		}
	}
	hd__map_policy = 0;

	unlink(path);
	free(text);
	free(m.text);
	free(mem.text);
	free(pip.text);
}

/* A line of the limit's length or more fails a mapped read as it fails
 * one from a pipe (the limit lowered to 1 MiB: the buffer's growth stops
 * there), at the same line; a line one byte shorter is read. */
static void test_filemap__long_line_as_a_pipe(void)
{
	char path[] = "/tmp/t_filemap_XXXXXX";
	size_t lim = hd__reader_max_line, n, len, v;
	struct said m = { 0 }, pip = { 0 };
	const size_t sizes[] = { (size_t)1 << 20, ((size_t)1 << 20) - 1,
				 ((size_t)1 << 20) + 1 };
	char *text = malloc((size_t)3 << 20);
	static const char head[] =
		"{\"address\":\"0x10\", \"type\":\"OBJECT\", \"memsize\":1}\n";
	int failed;

	T_ASSERT(text != NULL);
	hd__reader_max_line = (size_t)1 << 20;
	for (n = 0; n < 3; n++) {
		/* a record, then a line of sizes[n] bytes and its newline */
		len = sizeof(head) - 1;
		memcpy(text, head, len);
		v = sizes[n] - 70;
		len += (size_t)sprintf(text + len,
			"{\"address\":\"0x20\", \"type\":\"STRING\", \"value\":\"");
		memset(text + len, 'y', v);
		len += v;
		len += (size_t)sprintf(text + len, "\", \"memsize\":1}");
		/* pad to exactly sizes[n] bytes before the newline */
		while (len - (sizeof(head) - 1) < sizes[n])
			text[len++] = ' ';
		text[len++] = '\n';
		memcpy(text + len, head, sizeof(head) - 1);
		len += sizeof(head) - 1;
		strcpy(path, "/tmp/t_filemap_XXXXXX");
		T_ASSERT(write_temp(path, text, len) == 0);
		m.len = pip.len = 0;
		said_file(path, 0, &m);
		said_pipe(text, len, 0, &pip);
		unlink(path);
		failed = strstr(m.text, "longer than 4 GiB") != NULL;
		if (!t_failed_ && failed != (sizes[n] >= ((size_t)1 << 20))) {
			hd__reader_max_line = lim;
			T_FAIL("a line of %zu bytes: %s", sizes[n],
			       failed ? "failed" : "was read");
		}
		if (t_failed_)
			break;
		if (m.len != pip.len || memcmp(m.text, pip.text, m.len)) {
			hd__reader_max_line = lim;
			T_FAIL("a line of %zu bytes: %s", sizes[n],
			       first_diff(&m, &pip));
			break;
		}
	}
	hd__reader_max_line = lim;
	free(text);
	free(m.text);
	free(pip.text);
}

/* The resident pages of the mapping of path (its Rss in /proc/self/smaps),
 * in KiB, or -1 if it is not mapped. */
static long mapped_kib(const char *path)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[4096];
	long kib = -1;
	int in = 0;

	if (!f)
		return -2;
	while (fgets(line, sizeof(line), f)) {
		size_t n = strlen(line);

		if (n && line[n - 1] == '\n')
			line[--n] = 0;
		if (strchr(line, ' ') && (!strchr(line, ':') ||
					  strchr(line, ':') > strchr(line, ' '))) {
			/* a mapping's first line: "a-b perms off dev ino path" */
			in = n > strlen(path) &&
			     strcmp(line + n - strlen(path), path) == 0;
			continue;
		}
		if (strncmp(line, "Rss:", 4) == 0 && in)
			kib = (kib < 0 ? 0 : kib) + atol(line + 4);
	}
	fclose(f);
	return kib;
}

/*
 * 24 MB read with a window of 256 KiB: the file's mapping never holds
 * more than the window, the longest line (300 KiB) and what the kernel
 * maps around a fault: 64 KiB, or the whole folio of the page cache
 * (ext4's are up to 2 MiB, one each side of a window's ends); read again
 * without drops, it holds most of the file (so the measure sees pages
 * that stay).
 */
static void test_filemap__window_bounds_the_mapping(void)
{
	char path[] = "/tmp/t_filemap_XXXXXX";
	size_t len, budget = hd__map_budget;
	char *text = mixed((size_t)24 << 20, &len);
	hd_reader *r = NULL;
	const hd_record *rec;
	hd_error err = { 0 };
	long most, kib;
	unsigned long n;
	int pass;

	T_ASSERT(text != NULL);
	T_ASSERT(write_temp(path, text, len) == 0);
	hd__map_policy = 1; /* mapped, whatever the page cache holds */
	for (pass = 0; pass < 2; pass++) {
		hd__map_budget = pass == 0 ? (size_t)256 << 10 : SIZE_MAX;
		T_ASSERT(hd_reader_open(&r, path, NULL, &err) == 0);
		most = mapped_kib(path);
		for (n = 0; hd_reader_next(r, &rec, &err) == 0; n++)
			if (n % 500 == 0 && (kib = mapped_kib(path)) > most)
				most = kib;
		hd_reader_free(r);
		hd__map_budget = budget;
		if (!MAPS) {
			/* nothing mapped: read(2) into a buffer */
			T_EQ(most, -1);
			continue;
		}
		if (pass == 0 && most > 256 + 300 + 64 + 2 * 2048)
			T_FAIL("the mapping held %ld KiB, over the 256 KiB window",
			       most);
		if (pass == 1 && most < 16384)
			T_FAIL("without drops the mapping held only %ld KiB",
			       most);
		if (t_failed_)
			break;
		/* unmapped with the reader */
		T_EQ(mapped_kib(path), -1);
	}
	hd__map_budget = budget;
	hd__map_policy = 0;
	unlink(path);
	free(text);
}

/* hd_mapped_path names the file mapped at an address of it while the
 * reader lives, and nothing before its first byte, past its last, or
 * once the reader is freed. */
static void test_filemap__mapped_path(void)
{
	char path[] = "/tmp/t_filemap_XXXXXX";
	hd_reader *r = NULL;
	const hd_record *rec;
	hd_error err = { 0 };
	size_t len;
	char *text = mixed((size_t)64 << 10, &len);
	const char *at;

	T_ASSERT(text != NULL);
	T_ASSERT(write_temp(path, text, len) == 0);
	T_ASSERT(hd_reader_open(&r, path, NULL, &err) == 0);
	T_ASSERT(hd_reader_next(r, &rec, &err) == 0);
	at = rec->text;
	if (MAPS) {
		T_STREQ(hd_mapped_path(at), path);
		T_STREQ(hd_mapped_path(at + len - 1), path);
		T_ASSERT(hd_mapped_path(at + len + 4096) == NULL);
		T_ASSERT(hd_mapped_path(at - 1) == NULL);
	} else {
		T_ASSERT(hd_mapped_path(at) == NULL);
	}
	hd_reader_free(r);
	T_ASSERT(hd_mapped_path(at) == NULL);
	T_ASSERT(hd_mapped_path(NULL) == NULL);
	unlink(path);
	free(text);
}

/* The probe: every page of a block present pays, one page a touch does
 * not; small files are mapped whatever; the policy decides first. */
static void test_filemap__mapping_pays(void)
{
	size_t len = (size_t)24 << 20;
	char *full, *bare;

	hd__map_policy = 0;
	T_EQ(hd__map_pays("", 1), MAPS);
	if (!MAPS)
		return; /* nothing is ever mapped: the read(2) path */
	full = mmap(NULL, len, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	bare = mmap(NULL, len, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	T_ASSERT(full != MAP_FAILED && bare != MAP_FAILED);
#ifdef MADV_NOHUGEPAGE
	madvise(bare, len, MADV_NOHUGEPAGE); /* a touch maps one page */
#endif
	T_EQ(hd__map_pays(full, len), 1);
	T_EQ(hd__map_pays(bare, len), 0);
	T_EQ(hd__map_pays(bare, HD__MAP_PROBE_MIN - 1), 1);
	hd__map_policy = -1;
	T_EQ(hd__map_pays(full, len), 0);
	hd__map_policy = 1;
	T_EQ(hd__map_pays(bare, len), 1);
	hd__map_policy = 0;
	munmap(full, len);
	munmap(bare, len);
}

static const struct t_case cases[] = {
	T_CASE(filemap__mapping_pays),
	T_CASE(filemap__same_as_memory_and_pipe),
	T_CASE(filemap__long_line_as_a_pipe),
	T_CASE(filemap__window_bounds_the_mapping),
	T_CASE(filemap__mapped_path),
};

T_MAIN(cases)
