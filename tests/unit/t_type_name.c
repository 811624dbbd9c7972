/*
 * t_type_name.c - hd_type_from_name (a perfect hash over the type names)
 * answers as a plain search does: a name of the same length whose bytes
 * equal the type's name with bit 5 of each cleared. Every name in every
 * mix of cases, each with every byte replaced by each of the 256 values,
 * and random strings of 0 to 10 bytes.
 */
#include "t.h"
#include "hd_int.h"

/* The plain search, for comparison. */
static int slow_type(const char *name, size_t len)
{
	int t;
	size_t i;

	for (t = 1; t < HD_T__COUNT; t++) {
		const char *n = hd_type_name(t);

		if (strlen(n) != len)
			continue;
		for (i = 0; i < len; i++)
			if ((name[i] & ~0x20) != n[i])
				break;
		if (i == len)
			return t;
	}
	return HD_T_UNKNOWN;
}

static void test_type_name__names_and_cases(void)
{
	char buf[16];
	int t;
	unsigned mask;
	size_t i, len;

	for (t = 0; t < HD_T__COUNT; t++) {
		len = strlen(hd_type_name(t));
		for (mask = 0; mask < (1u << len); mask++) {
			memcpy(buf, hd_type_name(t), len);
			for (i = 0; i < len; i++)
				if (mask >> i & 1)
					buf[i] ^= 0x20;
			if (hd_type_from_name(buf, len) != t)
				T_FAIL("%.*s: %d, expected %d", (int)len, buf,
				       hd_type_from_name(buf, len), t);
		}
	}
}

static void test_type_name__every_byte(void)
{
	char buf[16];
	int t, c;
	size_t i, len;

	for (t = 0; t < HD_T__COUNT; t++) {
		len = strlen(hd_type_name(t));
		for (i = 0; i < len; i++)
			for (c = 0; c < 256; c++) {
				memcpy(buf, hd_type_name(t), len);
				buf[i] = (char)c;
				if (hd_type_from_name(buf, len) !=
				    slow_type(buf, len))
					T_FAIL("%s with byte %zu = %d", hd_type_name(t),
					       i, c);
				/* one byte shorter or longer */
				if (hd_type_from_name(buf, len - 1) !=
				    slow_type(buf, len - 1) ||
				    hd_type_from_name(buf, len + 1) !=
					    slow_type(buf, len + 1))
					T_FAIL("%s cut or grown at %zu", hd_type_name(t), i);
			}
	}
}

static void test_type_name__random(void)
{
	static const char letters[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcz_@` ";
	uint64_t s = 0x9e3779b97f4a7c15ULL;
	char buf[16];
	size_t len, i;
	long k;

	for (k = 0; k < 2000000; k++) {
		s ^= s << 13;
		s ^= s >> 7;
		s ^= s << 17;
		len = (size_t)(s % 11);
		for (i = 0; i < len; i++)
			buf[i] = letters[(s >> (8 + 5 * i % 50)) %
					 (sizeof(letters) - 1)];
		if (hd_type_from_name(buf, len) != slow_type(buf, len)) {
			T_FAIL("%.*s", (int)len, buf);
			return;
		}
	}
}

static const struct t_case cases[] = {
	T_CASE(type_name__names_and_cases),
	T_CASE(type_name__every_byte),
	T_CASE(type_name__random),
};

T_MAIN(cases)
