/*
 * t.h - the in-tree test framework (one header, no dependencies).
 *
 * A test file defines functions `static void test_<module>__<case>(void)`,
 * lists them with T_CASE() in a table and ends with T_MAIN(table). Each
 * case prints "ok - <file>/<case>" or "not ok - <file>/<case>: <why>";
 * tests/run.sh counts these lines. Run one case: build/tests/t_x <case>.
 */
#ifndef T_H
#define T_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct t_case {
	const char *name;
	void (*fn)(void);
};

static int t_failed_;
static char t_why_[512];

#define T_CASE(name) { #name, test_##name }

#define T_FAIL(...)                                                        \
	do {                                                               \
		if (!t_failed_) {                                          \
			int n_ = snprintf(t_why_, sizeof(t_why_),          \
					  "%s:%d: ", __FILE__, __LINE__);  \
			snprintf(t_why_ + n_, sizeof(t_why_) - (size_t)n_, \
				 __VA_ARGS__);                             \
		}                                                          \
		t_failed_ = 1;                                             \
	} while (0)

/* Each assertion records the first failure and returns from the case. */
#define T_ASSERT(expr)                                 \
	do {                                           \
		if (!(expr)) {                         \
			T_FAIL("assertion failed: %s", #expr); \
			return;                        \
		}                                      \
	} while (0)

#define T_EQ(a, b)                                                          \
	do {                                                                \
		uint64_t a_ = (uint64_t)(a), b_ = (uint64_t)(b);            \
		if (a_ != b_) {                                             \
			T_FAIL("%s == %" PRIu64 ", expected %s == %" PRIu64, \
			       #a, a_, #b, b_);                             \
			return;                                             \
		}                                                           \
	} while (0)

#define T_STREQ(a, b)                                                   \
	do {                                                            \
		const char *a_ = (a), *b_ = (b);                        \
		if (!a_ || !b_ || strcmp(a_, b_) != 0) {                \
			T_FAIL("%s is \"%.200s\", expected \"%.200s\"", #a,    \
			       a_ ? a_ : "(null)", b_ ? b_ : "(null)"); \
			return;                                         \
		}                                                       \
	} while (0)

/* A byte span (ptr, len) equals a C string. */
#define T_SPANEQ(ptr, len, s)                                              \
	do {                                                               \
		const char *p_ = (ptr), *s_ = (s);                         \
		size_t l_ = (len);                                         \
		if (l_ != strlen(s_) || (l_ && memcmp(p_, s_, l_) != 0)) { \
			T_FAIL("%s is \"%.*s\", expected \"%s\"", #ptr,    \
			       (int)(l_ > 200 ? 200 : l_), p_ ? p_ : "",   \
			       s_);                                        \
			return;                                            \
		}                                                          \
	} while (0)

/* A library call returns the expected hd_errcode. */
#define T_RC(call, code)                                                 \
	do {                                                             \
		int rc_ = (call);                                        \
		if (rc_ != (code)) {                                     \
			T_FAIL("%s returned %d, expected %s (%d)", #call, \
			       rc_, #code, (int)(code));                 \
			return;                                          \
		}                                                        \
	} while (0)

static inline int t_run_(const char *file, const struct t_case *cases,
			 size_t n, int argc, char **argv)
{
	const char *base = strrchr(file, '/');
	int failed = 0;
	size_t i;

	base = base ? base + 1 : file;
	for (i = 0; i < n; i++) {
		if (argc > 1 && strcmp(argv[1], cases[i].name) != 0)
			continue;
		t_failed_ = 0;
		t_why_[0] = '\0';
		cases[i].fn();
		if (t_failed_) {
			printf("not ok - %.*s/%s: %s\n",
			       (int)(strcspn(base, ".")), base, cases[i].name,
			       t_why_);
			failed++;
		} else {
			printf("ok - %.*s/%s\n", (int)(strcspn(base, ".")),
			       base, cases[i].name);
		}
		fflush(stdout);
	}
	return failed ? 1 : 0;
}

/*
 * A scratch directory for the cases that write files, one at a time:
 * t_scratch_make("t_x") makes /tmp/t_x.XXXXXX, t_at(name) names a file
 * in it (four results alive at once), t_slurp(path) reads the first
 * 255 bytes of a file ("" when it cannot be read), t_scratch_remove()
 * removes the directory whole, even the parts a case made unreadable.
 */
static inline char *t_scratch_(void)
{
	static char dir[64];

	return dir;
}

static inline void t_scratch_make(const char *prefix)
{
	snprintf(t_scratch_(), 64, "/tmp/%s.XXXXXX", prefix);
	if (!mkdtemp(t_scratch_()))
		abort();
}

static inline const char *t_at(const char *name)
{
	static char buf[4][512];
	static int k;

	k = (k + 1) % 4;
	snprintf(buf[k], sizeof(buf[k]), "%s/%s", t_scratch_(), name);
	return buf[k];
}

static inline const char *t_slurp(const char *path)
{
	static char buf[256];
	FILE *f = fopen(path, "r");
	size_t n = 0;

	if (f) {
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
	}
	buf[n] = '\0';
	return buf;
}

static inline void t_scratch_remove(void)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "chmod -R u+rwx '%s'; rm -rf '%s'",
		 t_scratch_(), t_scratch_());
	if (system(cmd) != 0)
		abort();
}

#define T_MAIN(cases)                                                    \
	int main(int argc, char **argv)                                  \
	{                                                                \
		return t_run_(__FILE__, cases,                           \
			      sizeof(cases) / sizeof(cases[0]), argc, argv); \
	}

#endif /* T_H */
