/*
 * t_select.c - the selection grammar's guard on --class /regex/: what
 * would hurt the C library's regex engine (deep groups, repetitions that
 * multiply, back-references) is refused with a message before regcomp
 * sees it; everything else compiles as POSIX extended regexes do. The
 * selections themselves are tested on real dumps by the CLI suites.
 */
#include "t.h"
#include "heapdump.h"

/* hd_select_add("class", "/re/"): its code, and the message in *err */
static int add_regex(const char *re, hd_error *err)
{
	hd_select *sel = NULL;
	char v[4200];
	int rc;

	memset(err, 0, sizeof(*err));
	if (snprintf(v, sizeof(v), "/%s/", re) >= (int)sizeof(v))
		return -1;
	if ((rc = hd_select_new(&sel, err)))
		return rc;
	rc = hd_select_add(sel, "class", v, err);
	hd_select_free(sel);
	return rc;
}

/* "(((...(a+)+...)+)+" with depth pluses */
static void nested_plus(char *buf, int depth)
{
	int i;

	for (i = 1; i < depth; i++)
		*buf++ = '(';
	*buf++ = 'a';
	*buf++ = '+';
	for (i = 1; i < depth; i++) {
		*buf++ = ')';
		*buf++ = '+';
	}
	*buf = '\0';
}

static void test_select__regex_accepted(void)
{
	static const char *const ok[] = {
		"^Net::", "Foo|Bar", "^(ActiveRecord|ActionView)::[A-Z]",
		"[[:alpha:]]+(::[A-Z][a-z]*){0,3}$", "^#<Class:0x[0-9a-f]+>$",
		"a{,5}", "a{2,}", "[]a]+", "[^]a]*", "[[.-.]]", "\\(", "x\\{",
		"a**", "IMEMO/(iseq|env)", "^$", ".",
		"a{1365}",	/* 1365 copies of a and its concatenation: 4095 */
		"a*{1000}",	/* starred copies: glibc's closures grow */
		"((((((((((((((((((((((((((((((((S))))))))))))))))))))))))))))))))",
	};
	hd_error err;
	size_t i;

	for (i = 0; i < sizeof(ok) / sizeof(*ok); i++)
		if (add_regex(ok[i], &err) != 0) {
			T_FAIL("/%s/ refused: %s", ok[i], err.msg);
			return;
		}
}

static void test_select__regex_refused(void)
{
	static const struct {
		const char *re, *msg;
	} bad[] = {
		/* CVE-2019-9192: glibc's matcher recurses forever */
		{ "(|)(\\1\\1)*", "back-references (\\1 to \\9) are not supported" },
		{ "(a)\\9", "back-references (\\1 to \\9) are not supported" },
		{ "a{1366}", "more than 4096 nodes once its repetitions are expanded" },
		{ "(Foo|Bar|Baz)*{5000}", "more than 4096 nodes" },
		{ "a*{2000}", "more than 4096 nodes" },
		{ "(a{100}){100}", "more than 4096 nodes" },
		{ "a{99999999999999999999}", "more than 4096 nodes" },
		{ "(((((((((((((((((((((((((((((((((S)))))))))))))))))))))))))))))))))",
		  "groups nested deeper than 32" },
		{ "x{", "Unmatched \\{" }, /* regcomp's own refusal */
	};
	hd_error err;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		if (add_regex(bad[i].re, &err) != HD_EINVAL ||
		    err.code != HD_EINVAL || !strstr(err.msg, bad[i].msg)) {
			T_FAIL("/%s/: \"%s\", expected \"%s\"", bad[i].re,
			       err.msg, bad[i].msg);
			return;
		}
	}
}

/* The operand of x+ is copied: nested, the copies double. 23 levels in
 * 70 bytes took glibc 13 GB and 44 s (found by fuzz_select). 10 levels
 * are 4092 nodes, and compile; 11 pass the bound. */
static void test_select__regex_nested_repetitions(void)
{
	char re[200];
	hd_error err;

	nested_plus(re, 10);
	T_EQ(add_regex(re, &err), 0);
	nested_plus(re, 11);
	T_EQ(add_regex(re, &err), HD_EINVAL);
	T_ASSERT(strstr(err.msg, "more than 4096 nodes"));
	nested_plus(re, 23);
	T_EQ(add_regex(re, &err), HD_EINVAL);
}

/* Brackets, escapes and intervals are read as regcomp reads them: a "("
 * or "\1" in a bracket is a member, an escaped "(" opens no group. */
static void test_select__regex_brackets_and_escapes(void)
{
	char re[200];
	hd_error err;
	int i, n = 0;

	T_EQ(add_regex("[\\1]", &err), 0);
	T_EQ(add_regex("[(]{1365}", &err), 0);
	T_EQ(add_regex("[[:alpha:](]{1366}", &err), HD_EINVAL);
	for (i = 0; i < 40; i++) { /* 40 escaped parens: no group at all */
		re[n++] = '\\';
		re[n++] = '(';
	}
	re[n] = '\0';
	T_EQ(add_regex(re, &err), 0);
	T_EQ(add_regex("[[:alpha:]](a)\\1", &err), HD_EINVAL);
}

static const struct t_case cases[] = {
	T_CASE(select__regex_accepted),
	T_CASE(select__regex_refused),
	T_CASE(select__regex_nested_repetitions),
	T_CASE(select__regex_brackets_and_escapes),
};

T_MAIN(cases)
