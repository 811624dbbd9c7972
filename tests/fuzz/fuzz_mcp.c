/*
 * fuzz_mcp.c - libFuzzer target: heapdump mcp's request parser
 * (cli/mcp_json.c): any bytes as one request line, parsed, its members
 * looked up as the server does, freed.
 */
#include "../../cli/mcp_json.c"

#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static size_t walk(const struct mj *v, int depth)
{
	size_t i, n = 1;

	if (depth > MJ_MAX_DEPTH + 1)
		abort(); /* the parser's bound */
	if (v->t == MJ_STR && strlen(v->s) > v->n)
		abort(); /* s[n] is its NUL */
	for (i = 0; i < v->nk; i++)
		n += walk(&v->kids[i], depth + 1);
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mj v;
	const char *why = NULL;
	const struct mj *p;

	if (mj_parse(&v, (const char *)data, size, &why) == 0) {
		walk(&v, 0);
		p = mj_get(&v, "params");
		(void)mj_get(p, "arguments");
		(void)mj_get(&v, "method");
		mj_free(&v);
	} else if (!why) {
		abort(); /* a failure always says why */
	}
	return 0;
}
