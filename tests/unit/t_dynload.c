/*
 * t_dynload.c - hd__dynload, which loads SQLite and ISA-L at their first
 * use: a library that loads fills the table with callable functions and
 * is loaded once; a library that is missing, or lacks a function, is an
 * error that names it and what to install, leaves the table unused and
 * is tried again at the next call. libm stands in for a real library
 * (every test program links it, and its functions are easy to check).
 */
#include "t.h"
#include "hd_int.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

struct m_api {
	HD__DYNFN(sqrt);
	HD__DYNFN(floor);
};

static void test_dynload__fills_the_table(void)
{
	static const struct hd__dynsym syms[] = {
		HD__DYNSYM(m_api, sqrt),
		HD__DYNSYM(m_api, floor),
	};
	struct m_api m = { 0 };
	struct hd__dynlib lib = { "libm.so.6", "libc6", syms, 2, &m, 0 };
	hd_error err = { 0 };

	T_RC(hd__dynload(&lib, &err), 0);
	T_ASSERT(lib.loaded == 1);
	T_ASSERT(m.sqrt != NULL && m.floor != NULL);
	T_ASSERT(m.sqrt(81.0) == 9.0);
	T_ASSERT(m.floor(2.5) == 2.0);
	/* loaded once: a second call changes nothing */
	m.floor = NULL;
	T_RC(hd__dynload(&lib, &err), 0);
	T_ASSERT(m.floor == NULL);
}

static void test_dynload__missing_library(void)
{
	static const struct hd__dynsym syms[] = { HD__DYNSYM(m_api, sqrt) };
	struct m_api m = { 0 };
	struct hd__dynlib lib = { "libhd-no-such-library.so.9",
				  "no-such-package", syms, 1, &m, 0 };
	hd_error err = { 0 };

	T_RC(hd__dynload(&lib, &err), HD_ERROR);
	T_ASSERT(strstr(err.msg, "cannot load libhd-no-such-library.so.9"));
	T_ASSERT(strstr(err.msg, "install no-such-package"));
	T_ASSERT(lib.loaded == 0 && m.sqrt == NULL);
	/* said again, the same, at the next call */
	memset(&err, 0, sizeof(err));
	T_RC(hd__dynload(&lib, &err), HD_ERROR);
	T_ASSERT(strstr(err.msg, "cannot load libhd-no-such-library.so.9"));
}

static void test_dynload__missing_function(void)
{
	static const struct hd__dynsym syms[] = {
		HD__DYNSYM(m_api, sqrt),
		{ "hd_no_such_function", offsetof(struct m_api, floor) },
	};
	struct m_api m = { 0 };
	struct hd__dynlib lib = { "libm.so.6", "libc6", syms, 2, &m, 0 };
	hd_error err = { 0 };

	T_RC(hd__dynload(&lib, &err), HD_ERROR);
	T_ASSERT(strstr(err.msg, "libm.so.6 has no function "
				     "hd_no_such_function"));
	T_ASSERT(lib.loaded == 0);
}

static const struct t_case cases[] = {
	T_CASE(dynload__fills_the_table),
	T_CASE(dynload__missing_library),
	T_CASE(dynload__missing_function),
};

T_MAIN(cases)
