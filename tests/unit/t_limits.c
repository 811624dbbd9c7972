/*
 * t_limits.c - the store's limits (man 5 heapdump-store, LIMITS): u32
 * node ids, u32 edge and root-reference positions, u32 string offsets.
 * Real dumps at those limits need hundreds of GB, so the build's limits
 * are lowered (hd__max_*) and the checks tried at and just over them:
 * exactly the limit builds, one more is refused with HD_ELIMIT and a
 * message naming the limit, never wrapped around. Stores claiming counts
 * over the format's limits are refused on open. Dumps over 4 GiB are
 * tested from the CLI (tests/cli/hostile.sh: a gzip dump of 4.3 GB).
 */
#include "t.h"
#include "hd_int.h"
#include "store_format.h"
#include "store_fixture.h"

/* A dump of n objects, each referencing the next r times, and a ROOT
 * line with k references. */
static const char *gen(unsigned n, unsigned r, unsigned k)
{
	static char buf[1 << 16];
	size_t o = 0;
	unsigned i, j;

	o += (size_t)snprintf(buf + o, sizeof(buf) - o,
			      "{\"type\":\"ROOT\", \"root\":\"vm\", "
			      "\"references\":[");
	for (j = 0; j < k; j++)
		o += (size_t)snprintf(buf + o, sizeof(buf) - o, "%s\"0x%x\"",
				      j ? ", " : "", 0x1000 + j % n * 16);
	o += (size_t)snprintf(buf + o, sizeof(buf) - o, "]}\n");
	for (i = 0; i < n; i++) {
		o += (size_t)snprintf(buf + o, sizeof(buf) - o,
				      "{\"address\":\"0x%x\", \"type\":\"DATA\", "
				      "\"struct\":\"s%u\", \"references\":[",
				      0x1000 + i * 16, i);
		for (j = 0; j < r; j++)
			o += (size_t)snprintf(buf + o, sizeof(buf) - o,
					      "%s\"0x%x\"", j ? ", " : "",
					      0x1000 + (i + 1) % n * 16);
		o += (size_t)snprintf(buf + o, sizeof(buf) - o, "]}\n");
	}
	return buf;
}

static int build(const char *text, hd_error *err)
{
	hd_store *s = NULL;
	int rc;

	memset(err, 0, sizeof(*err));
	if (fx_write(fx_path("l.json"), text, strlen(text)))
		return -100;
	rc = hd_store_build(&s, fx_path("l.json"), NULL, err);
	hd_store_close(s);
	return rc;
}

static void restore(void)
{
	hd__max_nodes = 0xfffffffeu;
	hd__max_refs = 0xffffffffu;
	hd__max_string_bytes = 0xffffffffu;
}

static void test_limits__defaults_are_the_format(void)
{
	/* what man 5 heapdump-store says */
	T_EQ(hd__max_nodes, 4294967294u);
	T_EQ(hd__max_refs, 4294967295u);
	T_EQ(hd__max_string_bytes, 4294967295u);
	T_EQ(HD_NODE_NONE, 0xffffffffu);
	T_EQ(sizeof(hd_node_id), 4);
}

static void test_limits__nodes(void)
{
	hd_error err;

	hd__max_nodes = 10;
	T_RC(build(gen(10, 1, 1), &err), 0);
	T_RC(build(gen(11, 1, 1), &err), HD_ELIMIT);
	restore();
	T_ASSERT(strstr(err.msg, "exceeds a limit of the store: more than "
				 "10 objects"));
	T_ASSERT(strstr(err.msg, "l.json"));
}

static void test_limits__references(void)
{
	hd_error err;

	hd__max_refs = 30;
	T_RC(build(gen(10, 3, 0), &err), 0);
	T_RC(build(gen(10, 3, 1), &err), 0); /* roots count apart */
	T_RC(build(gen(11, 3, 0), &err), HD_ELIMIT);
	restore();
	T_ASSERT(strstr(err.msg, "more than 30 references"));
	/* a record alone over the limit: refused, not wrapped */
	hd__max_refs = 2;
	T_RC(build(gen(2, 5, 0), &err), HD_ELIMIT);
	restore();
	T_ASSERT(strstr(err.msg, "more than 2 references"));
}

static void test_limits__root_references(void)
{
	hd_error err;

	hd__max_refs = 40;
	T_RC(build(gen(5, 1, 40), &err), 0);
	T_RC(build(gen(5, 1, 41), &err), HD_ELIMIT);
	restore();
	T_ASSERT(strstr(err.msg, "more than 40 root references"));
}

static void test_limits__strings(void)
{
	hd_error err;
	size_t base;

	/* the distinct strings of 10 objects: the source path, "vm" and
	 * s0..s9, each with its NUL */
	base = strlen(fx_path("l.json")) + 1 + 3 + 10 * 3;
	hd__max_string_bytes = base;
	T_RC(build(gen(10, 1, 1), &err), 0);
	hd__max_string_bytes = base - 1;
	T_RC(build(gen(10, 1, 1), &err), HD_ELIMIT);
	restore();
	T_ASSERT(strstr(err.msg, "bytes of distinct strings"));
}

/* A store that claims counts over the format's limits never opens. */
static void test_limits__store_counts(void)
{
	hd_store *s = NULL;
	hd_error err;
	unsigned char *img, *meta = NULL;
	size_t n, i;
	uint32_t count;

	T_RC(build(gen(10, 2, 2), &err), 0);
	T_RC(hd_store_build(&s, fx_path("l.json"), NULL, &err), 0);
	T_RC(hd_store_write(s, fx_path("l.hds"), &err), 0);
	hd_store_close(s);
	T_ASSERT((img = fx_read(fx_path("l.hds"), &n)) != NULL);
	count = hd__le32(img + 12);
	for (i = 0; i < count; i++)
		if (hd__le32(img + 32 + i * 24) == HD__SEC_META)
			meta = img + hd__le64(img + 32 + i * 24 + 8);
	if (!meta) {
		free(img);
		T_FAIL("no META section");
		return;
	}
	hd__put_le64(meta + HD__M_EDGES * 8, (uint64_t)1 << 32);
	fx_write(fx_path("bad.hds"), img, n);
	memset(&err, 0, sizeof(err));
	if (hd_store_open(&s, fx_path("bad.hds"), &err) != HD_EFORMAT ||
	    strcmp(err.msg, "store edge count is out of range")) {
		free(img);
		T_FAIL("2^32 edges: \"%s\"", err.msg);
		return;
	}
	hd__put_le64(meta + HD__M_EDGES * 8, 20);
	hd__put_le64(meta + HD__M_NODES * 8, 0xffffffffu);
	fx_write(fx_path("bad.hds"), img, n);
	memset(&err, 0, sizeof(err));
	if (hd_store_open(&s, fx_path("bad.hds"), &err) != HD_EFORMAT ||
	    strcmp(err.msg, "store node count is out of range")) {
		free(img);
		T_FAIL("2^32-1 nodes: \"%s\"", err.msg);
		return;
	}
	free(img);
	(void)fx_walk;
	fx_cleanup();
}

static const struct t_case cases[] = {
	T_CASE(limits__defaults_are_the_format),
	T_CASE(limits__nodes),
	T_CASE(limits__references),
	T_CASE(limits__root_references),
	T_CASE(limits__strings),
	T_CASE(limits__store_counts),
};

T_MAIN(cases)
