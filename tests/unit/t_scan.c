/*
 * t_scan.c - the dump scanner and the streaming reader: fields of every
 * Ruby version, broken lines, repairs, strict mode, gzip, limits.
 */
#include "t.h"
#include "hd_int.h"

#include <unistd.h>
#include <zlib.h>

struct seen {
	int problems;
	int repaired;
	uint64_t first_line;
	char msg[128];
};

static void on_problem(const hd_problem *p, void *payload)
{
	struct seen *s = payload;

	if (!s->problems++) {
		s->first_line = p->line;
		snprintf(s->msg, sizeof(s->msg), "%s", p->msg);
	}
	s->repaired += p->repaired;
}

/* Reads all records of text; returns the count of objects. */
static int read_all(const char *text, unsigned flags, struct seen *s,
		    hd_read_stats *rs, hd_error *err)
{
	hd_read_options o = HD_READ_OPTIONS_INIT;
	hd_reader *r;
	const hd_record *rec;
	int rc;

	memset(s, 0, sizeof(*s));
	o.flags = flags;
	o.problem = on_problem;
	o.payload = s;
	if (hd_reader_open_mem(&r, text, strlen(text), &o, err))
		return -100;
	while ((rc = hd_reader_next(r, &rec, err)) == 0)
		;
	hd_reader_stats(rs, r);
	hd_reader_free(r);
	return rc == HD_ITEROVER ? 0 : rc;
}

/* sc starts zeroed ({0}) and keeps its buffer between calls */
static int scan1(const char *line, hd_record *rec, struct hd__scan *sc)
{
	sc->strict = 0;
	return hd__scan_line(sc, line, strlen(line), rec);
}

static void test_scan__object_fields(void)
{
	struct hd__scan sc = { 0 };
	hd_record r;
	const char *l =
		"{\"address\":\"0x7fc3cd1399b0\", \"type\":\"STRING\", "
		"\"class\":\"0x7fc3cd0bb5d8\", \"frozen\":true, \"embedded\":true, "
		"\"bytesize\":2, \"value\":\"12\", \"encoding\":\"UTF-8\", "
		"\"file\":\"/app/alloc.rb\", \"line\":5, \"method\":\"build\", "
		"\"generation\":10, \"memsize\":40, \"flags\":{\"wb_protected\":true, "
		"\"old\":true}}";

	T_EQ(scan1(l, &r, &sc), HD__SCAN_OK);
	T_EQ(r.kind, HD_REC_OBJECT);
	T_EQ(r.type, HD_T_STRING);
	T_EQ(r.address, 0x7fc3cd1399b0ULL);
	T_EQ(r.class_addr, 0x7fc3cd0bb5d8ULL);
	T_EQ(r.size, 2);
	T_EQ(r.line, 5);
	T_EQ(r.generation, 10);
	T_EQ(r.memsize, 40);
	T_ASSERT(r.bits & HD_B_FROZEN);
	T_ASSERT(r.bits & HD_B_EMBEDDED);
	T_ASSERT(r.bits & HD_B_WB_PROTECTED);
	T_ASSERT(r.bits & HD_B_OLD);
	T_ASSERT(!(r.bits & HD_B_MARKED));
	T_SPANEQ(r.file.ptr, r.file.len, "/app/alloc.rb");
	T_SPANEQ(r.method.ptr, r.method.len, "build");
	T_SPANEQ(r.value.ptr, r.value.len, "12");
	T_ASSERT(r.has & HD_HAS_GENERATION);
	T_ASSERT(!sc.repaired);
	hd__scan_free(&sc);
}

static void test_scan__references(void)
{
	struct hd__scan sc = { 0 };
	hd_record r;

	T_EQ(scan1("{\"type\":\"ROOT\", \"root\":\"vm\", \"references\":"
		   "[\"0x1\", \"0x2\", \"0x1\"]}", &r, &sc), HD__SCAN_OK);
	T_EQ(r.kind, HD_REC_ROOT);
	T_SPANEQ(r.root.ptr, r.root.len, "vm");
	T_EQ(r.nrefs, 3);
	T_EQ(r.refs[0], 1);
	T_EQ(r.refs[2], 1);
	/* compact memprof-like spacing and uppercase, no 0x (2.x Windows) */
	T_EQ(scan1("{\"address\":\"00007FF6A0B1C2D3\",\"type\":\"ARRAY\","
		   "\"references\":[\"0X10\",\"ff\"]}", &r, &sc), HD__SCAN_OK);
	T_EQ(r.address, 0x7ff6a0b1c2d3ULL);
	T_EQ(r.nrefs, 2);
	T_EQ(r.refs[0], 0x10);
	T_EQ(r.refs[1], 0xff);
	T_EQ(scan1("{\"address\":\"0x1\", \"type\":\"ARRAY\", \"references\":[]}",
		   &r, &sc), HD__SCAN_OK);
	T_EQ(r.nrefs, 0);
	hd__scan_free(&sc);
}

static void test_scan__shape_and_flags_4_0(void)
{
	struct hd__scan sc = { 0 };
	hd_record r;

	T_EQ(scan1("{\"address\":\"0x104fe0098\", \"type\":\"SHAPE\", \"id\":4, "
		   "\"parent_id\":0, \"depth\":2, \"shape_type\":\"IVAR\","
		   "\"edge_name\":\"ID_INTERNAL(246)\", \"edges\":7, "
		   "\"memsize\":164}", &r, &sc), HD__SCAN_OK);
	T_EQ(r.kind, HD_REC_SHAPE);
	T_EQ(r.shape_id, 4);
	T_SPANEQ(r.edge_name.ptr, r.edge_name.len, "ID_INTERNAL(246)");
	T_EQ(scan1("{\"address\":\"0x7f13fa5fc8\", \"type\":\"OBJECT\", "
		   "\"shape_id\":1, \"slot_size\":40, \"class\":\"0x7f1308fea0\", "
		   "\"embedded\":true, \"ivars\":1, \"memsize\":40, "
		   "\"flags\":{\"wb_protected\":true, \"age\":3, "
		   "\"object_id\":8, \"shareable\":true}}", &r, &sc),
	     HD__SCAN_OK);
	T_EQ(r.age, 3);
	T_EQ(r.object_id, 8);
	T_EQ(r.slot_size, 40);
	T_ASSERT(r.bits & HD_B_SHAREABLE);
	T_ASSERT(r.has & HD_HAS_OBJECT_ID);
	hd__scan_free(&sc);
}

static void test_scan__unknown_fields_skipped(void)
{
	struct hd__scan sc = { 0 };
	hd_record r;

	T_EQ(scan1("{\"address\":\"0x1\", \"type\":\"MYSTERY\", "
		   "\"future\":{\"a\":[1,{\"b\":\"}\"}],\"c\":null}, "
		   "\"x\":-1.5e3, \"memsize\":7}", &r, &sc), HD__SCAN_OK);
	T_EQ(r.type, HD_T_UNKNOWN);
	T_SPANEQ(r.type_name.ptr, r.type_name.len, "MYSTERY");
	T_EQ(r.memsize, 7);
	hd__scan_free(&sc);
}

static void test_scan__raw_quote_in_file_repaired(void)
{
	struct hd__scan sc = { 0 };
	hd_record r;
	const char *l;

	T_EQ(scan1("{\"address\":\"0x1\", \"type\":\"OBJECT\", "
		   "\"file\":\"we\"ird.rb\", \"line\":7, \"memsize\":40}", &r,
		   &sc), HD__SCAN_OK);
	T_ASSERT(sc.repaired);
	T_SPANEQ(r.file.ptr, r.file.len, "we\"ird.rb");
	T_EQ(r.line, 7);
	T_EQ(r.memsize, 40);
	sc.strict = 1;
	l = "{\"address\":\"0x1\", \"type\":\"OBJECT\", "
	    "\"file\":\"we\"ird.rb\", \"line\":7}";
	T_EQ(hd__scan_line(&sc, l, strlen(l), &r), HD__SCAN_BAD);
	T_STREQ(sc.err_msg, "unescaped quote in string");
	hd__scan_free(&sc);
}

static void test_scan__escapes(void)
{
	char out[64];
	size_t n;
	const char *in = "a\\\"b\\\\c\\n\\u0041\\u00e9\\ud83d\\ude00\\u-061";

	n = hd_json_unescape(out, in, strlen(in));
	T_SPANEQ(out, n, "a\"b\\c\nA\xc3\xa9\xf0\x9f\x98\x80\\u-061");
}

static void test_reader__broken_lines_lenient(void)
{
	struct seen s;
	hd_read_stats rs;
	hd_error err = { 0 };
	const char *text =
		"{\"type\":\"ROOT\", \"root\":\"vm\", \"references\":[\"0x1\"]}\n"
		"{\"address\":\"0x1\", \"type\":\"OBJECT\", \"references\":[\"0x3\"], "
		"\"file\":\"we\"ird.rb\", \"line\":7}\n"
		"{\"address\":\"0x3\", \"type\":\"STRING\", \"file\":\"a\n"
		"b.rb\", \"line\":3, \"memsize\":40}\n"
		"program output\n"
		"{\n"
		"\n"
		"{\"address\":\"0x4\", \"type\":\"STRING\", \"method\":\"x\xff\"}\r\n"
		"{\"address\":\"0x5\", \"type\":\"ARRAY\", \"references\":[\"0x1\", \"0x3";

	T_EQ(read_all(text, 0, &s, &rs, &err), 0);
	T_EQ(rs.objects, 4);   /* 0x1 repaired, 0x3 joined, 0x4, 0x5 cut */
	T_EQ(rs.roots, 1);
	T_EQ(rs.skipped, 2);   /* program output, lone '{' */
	T_EQ(rs.repaired, 3);
	T_EQ(rs.blank, 1);
	T_EQ(rs.lines, 9);
	T_ASSERT(rs.truncated);
	T_EQ(s.problems, 5);
	T_EQ(s.first_line, 2);
}

static void test_reader__strict_reports_position(void)
{
	struct seen s;
	hd_read_stats rs;
	hd_error err = { 0 };
	const char *text =
		"{\"address\":\"0x1\", \"type\":\"OBJECT\"}\n"
		"{\"address\":\"0x2\", \"type\":\"OBJECT\", \"x\":tru}\n";

	T_EQ(read_all(text, HD_READ_STRICT, &s, &rs, &err), HD_EPARSE);
	T_EQ(err.line, 2);
	T_EQ(err.column, 40);
	T_ASSERT(strstr(err.msg, ":2:40: ") != NULL);
	T_EQ(s.problems, 0);
}

static void test_reader__memprof(void)
{
	struct seen s;
	hd_read_stats rs;
	hd_error err = { 0 };
	hd_reader *r;
	const hd_record *rec;
	const char *text =
		"{\"_id\":\"globals\",\"type\":\"globals\",\"variables\":"
		"{\":$stdout\":\"0x2b1f0\",\":$;\":null}}\n"
		"{\"_id\":\"0x15e5018\",\"file\":\"file.rb\",\"line\":2,"
		"\"type\":\"array\",\"class\":\"0x2a9c8\",\"class_name\":\"Array\","
		"\"length\":2,\"data\":[\"0x2b1f0\",3],\"code\":9}\n"
		"{\"_id\":\"lsof:3\",\"type\":\"lsof\",\"fd\":3}\n";

	T_EQ(read_all(text, 0, &s, &rs, &err), 0);
	T_EQ(rs.objects, 1);
	T_EQ(rs.roots, 1);
	T_EQ(rs.others, 1);
	T_ASSERT(rs.memprof);
	T_EQ(hd_reader_open_mem(&r, text, strlen(text), NULL, &err), 0);
	T_EQ(hd_reader_next(r, &rec, &err), 0);
	T_EQ(rec->kind, HD_REC_ROOT);
	T_EQ(rec->nrefs, 1);
	T_EQ(rec->refs[0], 0x2b1f0);
	T_EQ(hd_reader_next(r, &rec, &err), 0);
	T_EQ(rec->type, HD_T_ARRAY);
	T_EQ(rec->address, 0x15e5018);
	T_EQ(rec->class_addr, 0x2a9c8);
	T_EQ(rec->size, 2);
	T_EQ(rec->nrefs, 1);
	hd_reader_free(r);
}

static void test_reader__record_text_and_offsets(void)
{
	hd_reader *r;
	const hd_record *rec;
	hd_error err = { 0 };
	const char *text = "\n{\"address\":\"0x1\", \"type\":\"NONE\"}\r\n"
			   "{\"address\":\"0x2\", \"type\":\"ZOMBIE\"}\n";

	T_EQ(hd_reader_open_mem(&r, text, strlen(text), NULL, &err), 0);
	T_EQ(hd_reader_next(r, &rec, &err), 0);
	T_EQ(rec->offset, 1);
	T_EQ(rec->lineno, 2);
	T_SPANEQ(rec->text, rec->text_len,
		 "{\"address\":\"0x1\", \"type\":\"NONE\"}");
	T_EQ(hd_reader_next(r, &rec, &err), 0);
	T_EQ(rec->type, HD_T_ZOMBIE);
	T_EQ(rec->lineno, 3);
	T_EQ(hd_reader_next(r, &rec, &err), HD_ITEROVER);
	T_EQ(hd_reader_next(r, &rec, &err), HD_ITEROVER);
	hd_reader_free(r);
}

/* A file read in 4 MiB chunks: lines across chunk borders, long lines. */
static void test_reader__file_chunks_and_gzip(void)
{
	char path[] = "/tmp/t_scan_XXXXXX";
	char gzpath[64];
	int fd = mkstemp(path), i;
	FILE *f = fdopen(fd, "w");
	gzFile gz;
	hd_reader *r;
	const hd_record *rec;
	hd_error err = { 0 };
	hd_read_stats rs;
	uint64_t n = 0, refs = 0;
	int rc, pass;

	T_ASSERT(f);
	snprintf(gzpath, sizeof(gzpath), "%s.gz", path);
	gz = gzopen(gzpath, "wb");
	T_ASSERT(gz);
	for (i = 0; i < 60000; i++) {
		char line[256];
		int len = snprintf(line, sizeof(line),
				   "{\"address\":\"0x%x\", \"type\":\"ARRAY\", "
				   "\"references\":[\"0x%x\", \"0x%x\"], \"memsize\":40}\n",
				   i + 1, i + 2, i + 3);
		fwrite(line, 1, (size_t)len, f);
		gzwrite(gz, line, (unsigned)len);
	}
	/* one 9 MB line: more than two chunks */
	fputs("{\"address\":\"0xffff0\", \"type\":\"ARRAY\", \"references\":[", f);
	gzputs(gz, "{\"address\":\"0xffff0\", \"type\":\"ARRAY\", \"references\":[");
	for (i = 0; i < 600000; i++) {
		fputs(i ? ", \"0x7f0000001234\"" : "\"0x7f0000001234\"", f);
		gzputs(gz, i ? ", \"0x7f0000001234\"" : "\"0x7f0000001234\"");
	}
	fputs("]}\n", f);
	gzputs(gz, "]}\n");
	fclose(f);
	gzclose(gz);
	for (pass = 0; pass < 2; pass++) {
		n = refs = 0;
		T_EQ(hd_reader_open(&r, pass ? gzpath : path, NULL, &err), 0);
		while ((rc = hd_reader_next(r, &rec, &err)) == 0) {
			n++;
			refs += rec->nrefs;
		}
		T_EQ(rc, HD_ITEROVER);
		hd_reader_stats(&rs, r);
		hd_reader_free(r);
		T_EQ(n, 60001);
		T_EQ(refs, 120000 + 600000);
		T_EQ(rs.gzip, pass);
		T_EQ(rs.skipped + rs.repaired, 0);
	}
	unlink(path);
	unlink(gzpath);
}

static void test_reader__missing_file(void)
{
	hd_reader *r = NULL;
	hd_error err = { 0 };

	T_EQ(hd_reader_open(&r, "/nonexistent/x.json", NULL, &err), HD_EIO);
	T_ASSERT(r == NULL);
	T_ASSERT(strstr(err.msg, "cannot open '/nonexistent/x.json'") != NULL);
	T_EQ(err.sys_errno, 2);
}

static void test_scan__hostile_nesting(void)
{
	char line[4096];
	struct hd__scan sc = { 0 };
	hd_record r;
	size_t n = 0;
	int i;

	n += (size_t)sprintf(line, "{\"address\":\"0x1\", \"type\":\"X\", \"y\":");
	for (i = 0; i < 1000; i++)
		line[n++] = '[';
	line[n] = '\0';
	T_EQ(scan1(line, &r, &sc), HD__SCAN_BAD);
	T_STREQ(sc.err_msg, "nesting too deep");
	hd__scan_free(&sc);
}

static const struct t_case cases[] = {
	T_CASE(scan__object_fields),
	T_CASE(scan__references),
	T_CASE(scan__shape_and_flags_4_0),
	T_CASE(scan__unknown_fields_skipped),
	T_CASE(scan__raw_quote_in_file_repaired),
	T_CASE(scan__escapes),
	T_CASE(scan__hostile_nesting),
	T_CASE(reader__broken_lines_lenient),
	T_CASE(reader__strict_reports_position),
	T_CASE(reader__memprof),
	T_CASE(reader__record_text_and_offsets),
	T_CASE(reader__file_chunks_and_gzip),
	T_CASE(reader__missing_file),
};

T_MAIN(cases)
