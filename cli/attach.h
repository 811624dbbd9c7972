/*
 * attach.h - heapdump dump --attach: a Ruby process that never loaded the
 * heapdump gem writes its own dump at a safe point, scheduled through gdb
 * (attach.c; the protocol is in man 1 heapdump-dump, ATTACHING).
 */
#ifndef CLI_ATTACH_H
#define CLI_ATTACH_H

/*
 * Has process pid write DIR/heapdump-PID-TIME.json (dir absolute) and
 * waits for it at most timeout seconds; on success *found is its path
 * (malloc'ed). Returns EXIT_OK or EXIT_FAIL, having said why.
 */
int cli_attach_dump(long pid, const char *dir, unsigned long long timeout,
		    int quiet, char **found);

#endif
