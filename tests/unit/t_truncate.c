/*
 * t_truncate.c - a real dump (6 KB of the Ruby 4.0 fixture: a ROOT
 * line, SHAPE lines, objects with flags, strings, traced sites) cut at every
 * byte offset. Each prefix, read leniently, gives no more objects than
 * the whole and reports exactly one problem when the cut breaks a record
 * (none when it falls at a line end, or right before one); read
 * strictly, it fails with HD_EPARSE on the cut line (line and column
 * set) exactly when the cut breaks a record. Every 7th prefix is also
 * indexed: never more nodes than the whole. The CLI's exit codes on cut
 * dumps are checked by tests/cli/hostile.sh.
 */
#include "t.h"
#include "hd_int.h"
#include "store_fixture.h"

#define SRC "data/dumps/ok_ruby4.0_traced.json"
#define WANT 6000

static char *text;
static size_t len;
static uint64_t full_objects, full_nodes;

/* Line i (0-based) of the n bytes at p, and its length with the '\n'. */
static const char *line_at(const char *p, size_t n, size_t i, size_t *ll)
{
	const char *e = p + n, *nl;

	while (i-- && (nl = memchr(p, '\n', (size_t)(e - p))))
		p = nl + 1;
	nl = memchr(p, '\n', (size_t)(e - p));
	*ll = nl ? (size_t)(nl - p) + 1 : 0;
	return p;
}

/* Two ROOT lines, two SHAPE lines, then objects from the middle. */
static int setup(void)
{
	static const size_t pick[] = { 1, 4, 5 };
	unsigned char *all;
	const char *l;
	size_t n, i, ll;

	if (text)
		return 0;
	if (!(all = fx_read(SRC, &n)) || !(text = malloc(WANT + 1))) {
		free(all);
		return -1;
	}
	len = 0;
	for (i = 0; i < sizeof(pick) / sizeof(*pick); i++) {
		l = line_at((const char *)all, n, pick[i], &ll);
		if (ll && len + ll <= WANT / 2) {
			memcpy(text + len, l, ll);
			len += ll;
		}
	}
	for (i = 5000; len < WANT; i++) {
		l = line_at((const char *)all, n, i, &ll);
		if (!ll || len + ll > WANT)
			break;
		memcpy(text + len, l, ll);
		len += ll;
	}
	free(all);
	return len > WANT / 2 ? 0 : -1;
}

static unsigned problems;

static void on_problem(const hd_problem *p, void *payload)
{
	(void)p;
	(void)payload;
	problems++;
}

static uint64_t records;

/* Reads text[0..k): objects (records: every kind), and the result. */
static int read_prefix(size_t k, int strict, uint64_t *objects,
		       hd_error *err)
{
	hd_read_options o = HD_READ_OPTIONS_INIT;
	const hd_record *rec;
	hd_reader *r = NULL;
	hd_read_stats st;
	int rc;

	o.flags = strict ? HD_READ_STRICT : 0;
	o.problem = on_problem;
	problems = 0;
	memset(err, 0, sizeof(*err));
	if ((rc = hd_reader_open_mem(&r, text, k, &o, err)))
		return rc;
	while ((rc = hd_reader_next(r, &rec, err)) == 0)
		;
	hd_reader_stats(&st, r);
	*objects = st.objects;
	records = st.objects + st.roots + st.shapes + st.others;
	hd_reader_free(r);
	return rc == HD_ITEROVER ? 0 : rc;
}

static void test_truncate__every_byte(void)
{
	hd_store *s = NULL;
	hd_error err;
	uint64_t objects;
	size_t k, line_start = 0, lines = 1, built = 0;
	int rc, broken;

	T_RC(setup(), 0);
	T_RC(read_prefix(len, 1, &full_objects, &err), 0);
	T_ASSERT(full_objects > 10);
	T_RC(fx_write(fx_path("p.json"), text, len), 0);
	T_RC(hd_store_build(&s, fx_path("p.json"), NULL, &err), 0);
	full_nodes = hd_store_node_count(s);
	hd_store_close(s);
	for (k = 0; k < len; k++) {
		if (k && text[k - 1] == '\n') {
			line_start = k;
			lines++;
		}
		/* a record is broken unless the cut is at a line's start,
		 * or at its end (before the newline) */
		broken = k > line_start && text[k] != '\n';
		/* a prefix without a record (within the first line, the cut
		 * one not salvaged) is not a heap dump: one error, no
		 * report per line */
		rc = read_prefix(k, 0, &objects, &err);
		if (!records && lines == 1 && rc == HD_ENOTDUMP && !problems)
			rc = 0, broken = 0;
		if (rc || objects > full_objects || problems != (unsigned)broken) {
			T_FAIL("cut at %zu: lenient rc %d, %llu objects (whole "
			       "%llu), %u problems, expected %d", k, rc,
			       (unsigned long long)objects,
			       (unsigned long long)full_objects, problems,
			       broken);
			return;
		}
		broken = k > line_start && text[k] != '\n';
		rc = read_prefix(k, 1, &objects, &err);
		if (k == 0 && rc == HD_ENOTDUMP)
			rc = 0; /* empty */
		if (broken ? rc != HD_EPARSE || err.line != lines ||
				     !err.column || !err.msg[0] :
			     rc != 0) {
			T_FAIL("cut at %zu (line %zu): strict rc %d, at %llu:%llu "
			       "\"%s\"", k, lines, rc,
			       (unsigned long long)err.line,
			       (unsigned long long)err.column, err.msg);
			return;
		}
		if (k % 7)
			continue;
		if (fx_write(fx_path("p.json"), text, k)) {
			T_FAIL("cannot write a prefix");
			return;
		}
		rc = hd_store_build(&s, fx_path("p.json"), NULL, &err);
		if (rc == HD_ENOTDUMP && lines == 1) {
			built++;
			continue;
		}
		if (rc || hd_store_node_count(s) > full_nodes) {
			T_FAIL("cut at %zu: index rc %d, %u nodes (whole %llu)",
			       k, rc, s ? hd_store_node_count(s) : 0,
			       (unsigned long long)full_nodes);
			hd_store_close(s);
			return;
		}
		hd_store_close(s);
		s = NULL;
		built++;
	}
	printf("# %zu prefixes read twice, %zu indexed\n", len, built);
}

/*
 * Lines of every length from 56 to 330 bytes, at every shift of 0 to 31
 * bytes in memory: the reader's search for the newline (32 bytes a step,
 * then the tail) ends each record exactly at its line's end.
 */
static void test_truncate__every_line_length(void)
{
	enum { MIN = 56, MAX = 330 };
	size_t cap = (size_t)(MAX + 1) * (MAX - MIN + 1) + 64, n = 0, k;
	char *buf = malloc(cap + 32), *t;
	unsigned shift, bad = 0;

	T_ASSERT(buf != NULL);
	if (!buf)
		return;
	t = buf + 32;
	for (k = MIN; k <= MAX; k++) {
		/* {"address":"0x1", "type":"STRING", "value":"aaa"} */
		int w = snprintf(t + n, cap - n,
				 "{\"address\":\"0x%zx\", \"type\":\"STRING\", "
				 "\"value\":\"",
				 k);
		n += (size_t)w;
		memset(t + n, 'a', k - 3 - (size_t)w);
		n += k - 3 - (size_t)w;
		memcpy(t + n, "\"}\n", 3);
		n += 3;
	}
	for (shift = 0; shift < 32; shift++) {
		hd_read_options o = HD_READ_OPTIONS_INIT;
		const hd_record *rec;
		hd_reader *r = NULL;
		hd_error err = { 0 };
		size_t want = MIN;

		memmove(buf + shift, t, n);
		t = buf + shift;
		T_RC(hd_reader_open_mem(&r, t, n, &o, &err), 0);
		while (r && hd_reader_next(r, &rec, &err) == 0) {
			bad += rec->text_len != want - 1 || rec->address != want;
			want++;
		}
		bad += want != MAX + 1;
		hd_reader_free(r);
	}
	T_EQ(bad, 0);
	free(buf);
}

static void test_truncate__cleanup(void)
{
	(void)fx_walk;
	free(text);
	text = NULL;
	fx_cleanup();
	T_ASSERT(1);
}

static const struct t_case cases[] = {
	T_CASE(truncate__every_byte),
	T_CASE(truncate__every_line_length),
	T_CASE(truncate__cleanup),
};

T_MAIN(cases)
