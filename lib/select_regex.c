/*
 * select_regex.c - the guard a --class or --name /regex/ passes before
 * the C library compiles it (select.c).
 */
#include "select_int.h"

/*
 * Regexes are compiled and run by the C library, and a short one can
 * still hurt glibc's: its parser recurses once per nested group (a deep
 * one overflows the stack); it copies the operand of every x+ and
 * x{n,m}, so that nested repetitions multiply (23 nested "+" in 70
 * bytes took 13 GB and 44 s, found by fuzz_select) and starred copies
 * grow its closures quadratically; and a back-reference can send its
 * matcher into a recursion that never ends ("(|)(\1\1)*" crashes it:
 * CVE-2019-9192, not fixed in glibc). So a /regex/ is walked first, in
 * one pass with no recursion: at most RE_MAX_LEN bytes, RE_MAX_DEPTH
 * levels of groups, no back-reference, and at most RE_MAX_NODES nodes
 * once every repetition is expanded (an upper bound of what regcomp
 * builds; the worst found at the bound, "((a*)*){580}", compiles in a
 * third of a second and 12 MB).
 */
#define RE_MAX_LEN 1024
#define RE_MAX_DEPTH 32
#define RE_MAX_NODES 4096
#define RE_DUP_CAP 100000 /* past RE_DUP_MAX: regcomp refuses it anyway */

/* One level of groups: its nodes so far, those of its last item (what a
 * repetition that follows applies to; 0 after "|" or at its start). */
struct re_level {
	uint64_t sum, last;
};

/* The index just past the bracket expression opened before re[i]. */
static size_t re_bracket_end(const char *re, size_t n, size_t i)
{
	if (i < n && re[i] == '^')
		i++;
	if (i < n && re[i] == ']') /* a leading ']' is a member */
		i++;
	while (i < n && re[i] != ']') {
		char t = i + 1 < n ? re[i + 1] : 0;

		if (re[i] == '[' && (t == ':' || t == '=' || t == '.')) {
			/* [:class:], [=equiv=], [.coll.] up to "t]" */
			for (i += 2; i + 1 < n; i++)
				if (re[i] == t && re[i + 1] == ']')
					break;
			i += 2;
		} else {
			i++;
		}
	}
	return i < n ? i + 1 : n;
}

static size_t re_number(const char *re, size_t n, size_t *i, int *any)
{
	size_t v = 0;

	*any = 0;
	for (; *i < n && re[*i] >= '0' && re[*i] <= '9'; (*i)++) {
		*any = 1;
		v = v * 10 + (size_t)(re[*i] - '0');
		if (v > RE_DUP_CAP)
			v = RE_DUP_CAP;
	}
	return v;
}

/* An interval {n}, {n,}, {n,m} or {,m} opened before re[*i]: the copies
 * of its operand regcomp makes (at least 1), *i moved past it; 0 when it
 * is no interval ("{" is then an ordinary character). */
static size_t re_interval(const char *re, size_t n, size_t *i)
{
	size_t j = *i, lo, hi, copies;
	int has_lo, has_hi = 0, comma = 0;

	lo = re_number(re, n, &j, &has_lo);
	hi = lo;
	if (j < n && re[j] == ',') {
		comma = 1;
		j++;
		hi = re_number(re, n, &j, &has_hi);
	}
	if (j >= n || re[j] != '}' || (!has_lo && !has_hi))
		return 0;
	*i = j + 1;
	copies = !comma || has_hi ? hi : lo + 1; /* {n,}: n, then x* */
	return copies ? copies : 1;
}

/* Refuses re[0..n) when it would hurt the C library (see above); key
 * names the option in messages. */
int hd__re_check(const char *key, const char *re, size_t n,
		 hd_error *err)
{
	struct re_level lv[RE_MAX_DEPTH + 1];
	unsigned d = 0;
	size_t i = 0, copies;
	uint64_t w;
	char c;

	if (n > RE_MAX_LEN)
		return hd__error(err, HD_EINVAL,
				 "%s /regex/: longer than %d bytes",
				 key, RE_MAX_LEN);
	lv[0].sum = lv[0].last = 0;
	while (i < n) {
		c = re[i++];
		w = 1; /* an ordinary character, ".", "^", "$" */
		switch (c) {
		case '\\':
			if (i < n && re[i] >= '1' && re[i] <= '9')
				return hd__error(err, HD_EINVAL,
						 "%s /regex/: back-references "
						 "(\\1 to \\9) are not supported",
						 key);
			i += i < n;
			break;
		case '[':
			i = re_bracket_end(re, n, i);
			break;
		case '(':
			if (d == RE_MAX_DEPTH)
				return hd__error(err, HD_EINVAL,
						 "%s /regex/: groups nested "
						 "deeper than %d",
						 key, RE_MAX_DEPTH);
			d++;
			lv[d].sum = lv[d].last = 0;
			continue;
		case ')':
			if (d) /* else an ordinary character */
				w = lv[d--].sum + 1;
			break;
		case '|':
			lv[d].last = 0;
			break;
		case '*':
		case '?':
			w = lv[d].last + 1;
			lv[d].sum -= lv[d].last;
			break;
		case '+': /* x x* */
			w = 2 * lv[d].last + 2;
			lv[d].sum -= lv[d].last;
			break;
		case '{':
			if (!(copies = re_interval(re, n, &i)))
				break;
			w = (uint64_t)copies * (lv[d].last + 2);
			lv[d].sum -= lv[d].last;
			break;
		}
		lv[d].sum += w;
		lv[d].last = c == '|' ? 0 : w;
		if (lv[d].sum > RE_MAX_NODES)
			return hd__error(err, HD_EINVAL,
					 "%s /regex/: more than %d nodes "
					 "once its repetitions are expanded "
					 "(x+ and x{n,m} copy x)",
					 key, RE_MAX_NODES);
	}
	return 0;
}
