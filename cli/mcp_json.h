/*
 * mcp_json.h - the JSON of heapdump mcp's requests (mcp_json.c): one
 * line parsed into a tree, bounded (depth, size), strings decoded.
 */
#ifndef CLI_MCP_JSON_H
#define CLI_MCP_JSON_H

#include <stddef.h>

enum mj_type { MJ_NULL, MJ_BOOL, MJ_NUM, MJ_STR, MJ_ARR, MJ_OBJ };

struct mj {
	enum mj_type t;
	int b;              /* MJ_BOOL */
	char *s;            /* MJ_STR: decoded, NUL-ended; MJ_NUM: its text */
	size_t n;           /* length of s */
	const char *raw;    /* the value's text in the line */
	size_t rawlen;
	struct mj *kids;    /* MJ_ARR, MJ_OBJ: nk values */
	char **keys;        /* MJ_OBJ: nk decoded keys */
	size_t nk;
};

/* The deepest nesting a request may have. */
#define MJ_MAX_DEPTH 32

/* Parses text[0..len) as one JSON value (whitespace around it allowed).
 * Returns 0, -1 (not JSON: *why says where), -2 (out of memory). */
int mj_parse(struct mj *out, const char *text, size_t len, const char **why);
void mj_free(struct mj *v);
/* Member key of an object, or NULL. */
const struct mj *mj_get(const struct mj *o, const char *key);

#endif
