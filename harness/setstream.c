// SPDX-License-Identifier: GPL-2.0
/*
 * For "make bench": Debian's fio cannot set a write stream ID, so this
 * preload library does it.  A file that the program opens by the path in
 * $SETSTREAM_PATH gets the stream ID $SETSTREAM_ID with
 * posix_fadvise(POSIX_FADV_STREAMID) right after open(); if that fails,
 * the program is stopped, so that no run counts as tagged that was not.
 *
 *	LD_PRELOAD=setstream.so SETSTREAM_PATH=/dev/x SETSTREAM_ID=1 fio ...
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define POSIX_FADV_STREAMID	8

typedef int (*open_fn)(const char *, int, ...);

static int tag(const char *path, int fd)
{
	const char *want = getenv("SETSTREAM_PATH");
	const char *id = getenv("SETSTREAM_ID");
	int err;

	if (fd < 0 || !want || !id || strcmp(path, want))
		return fd;
	err = posix_fadvise(fd, atoi(id), 0, POSIX_FADV_STREAMID);
	if (err) {
		fprintf(stderr, "setstream: stream %s on %s: %s\n", id, path,
			strerror(err));
		abort();
	}
	return fd;
}

static mode_t mode_of(int flags, va_list ap)
{
	return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE ?
		va_arg(ap, mode_t) : 0;
}

int open(const char *path, int flags, ...)
{
	static open_fn real;
	va_list ap;
	mode_t mode;

	va_start(ap, flags);
	mode = mode_of(flags, ap);
	va_end(ap);
	if (!real)
		real = (open_fn)dlsym(RTLD_NEXT, "open");
	return tag(path, real(path, flags, mode));
}

/* On 64-bit, open64() is open(). */
int open64(const char *path, int flags, ...) __attribute__((alias("open")));
