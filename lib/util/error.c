/*
 * error.c - filling the caller's hd_error, and static descriptions.
 */
#include "util_int.h"

#include <stdio.h>

/* The file VERSION is the one version (the Makefile passes it): the
 * header must say the same, or make version has not been run. */
#if defined(HD_BUILT_MAJOR) && (HD_VERSION_MAJOR != HD_BUILT_MAJOR || \
				HD_VERSION_MINOR != HD_BUILT_MINOR || \
				HD_VERSION_PATCH != HD_BUILT_PATCH)
#error "lib/heapdump.h's HD_VERSION_* differ from the file VERSION: run make version"
#endif

const char *hd_version(void)
{
	return HD_VERSION_STRING;
}

const char *hd_strerror(int code)
{
	switch (code) {
	case HD_OK:
		return "success";
	case HD_ENOMEM:
		return "out of memory";
	case HD_EIO:
		return "input/output error";
	case HD_EPARSE:
		return "parse error";
	case HD_EFORMAT:
		return "corrupt or foreign store";
	case HD_ENOTFOUND:
		return "not found";
	case HD_EINVAL:
		return "invalid argument";
	case HD_ELIMIT:
		return "limit exceeded";
	case HD_ESTALE:
		return "source dump changed since indexing";
	case HD_ENOTDUMP:
		return "not a heap dump";
	case HD_ITEROVER:
		return "end of iteration";
	default:
		return "error";
	}
}

static int fill(hd_error *err, int code, int sys_errno, uint64_t line,
		uint64_t column, uint64_t offset, const char *fmt, va_list ap)
{
	if (!err)
		return code;
	err->code = code;
	err->sys_errno = sys_errno;
	err->line = line;
	err->column = column;
	err->offset = offset;
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	return code;
}

int hd__error(hd_error *err, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fill(err, code, 0, 0, 0, 0, fmt, ap);
	va_end(ap);
	return code;
}

int hd__error_sys(hd_error *err, int sys_errno, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fill(err, HD_EIO, sys_errno, 0, 0, 0, fmt, ap);
	va_end(ap);
	return HD_EIO;
}

int hd__error_at(hd_error *err, int code, uint64_t line, uint64_t column,
		 uint64_t offset, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fill(err, code, 0, line, column, offset, fmt, ap);
	va_end(ap);
	return code;
}

const char *hd__commas(uint64_t v, char buf[32])
{
	char tmp[32];
	int n = snprintf(tmp, sizeof(tmp), "%llu", (unsigned long long)v), i,
	    k = 0;

	for (i = 0; i < n; i++) {
		if (i && (n - i) % 3 == 0)
			buf[k++] = ',';
		buf[k++] = tmp[i];
	}
	buf[k] = '\0';
	return buf;
}
