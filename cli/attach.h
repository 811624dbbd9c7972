/*
 * attach.h - heapdump dump --attach: a Ruby process that never loaded the
 * heapdump gem writes its own dump at a safe point, scheduled through gdb
 * (attach.c; the protocol is in man 1 heapdump-dump, ATTACHING).
 */
#ifndef CLI_ATTACH_H
#define CLI_ATTACH_H

#include <stddef.h>

/*
 * Has process pid write DIR/heapdump-PID-TIME.json (dir absolute) and
 * waits for it at most timeout seconds; on success *found is its path
 * (malloc'ed). Returns EXIT_OK or EXIT_FAIL, having said why.
 */
int cli_attach_dump(long pid, const char *dir, unsigned long long timeout,
		    int quiet, char **found);

/*
 * The effective uid of process pid (the second field of "Uid:" in
 * /proc/PID/status), or -1.
 */
long cli_proc_euid(long pid);

/*
 * 0 when path is a dump that process's user wrote and no one else could
 * have: not a link (opened O_NOFOLLOW), a regular file (on the
 * descriptor), owned by euid, writable by no group or other. Else -1
 * with the reason in why (size bytes).
 */
int cli_dump_trusted(const char *path, long euid, char *why, size_t size);

#endif
