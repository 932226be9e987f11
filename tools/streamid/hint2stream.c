// SPDX-License-Identifier: GPL-2.0
/*
 * hint2stream.so - give the write lifetime hints of an unchanged program
 * their placement, as write stream IDs.
 *
 * Usage: LD_PRELOAD=/path/to/hint2stream.so PROGRAM [ARG...]
 *
 * A program that calls fcntl(fd, F_SET_RW_HINT, &hint) gets, for the file,
 * the stream ID of its hint (POSIX_FADV_STREAMID): SHORT 1, MEDIUM 2,
 * LONG 3, EXTREME 4; NONE and NOT_SET clear it.  HINT2STREAM=S,M,L,E sets
 * other IDs (0 to 255).  The hint itself is set as well, with the value
 * the program meant.
 *
 * RocksDB (7.x and earlier) passes a pointer to a 4-byte enum where the
 * kernel reads 8 bytes, so every such call fails with EINVAL and no file
 * gets a hint; where the call as made fails with EINVAL, this library
 * passes the kernel the 4 bytes as a correct 8-byte value.
 *
 * RocksDB hints its write-ahead log SHORT, the files that flushes and
 * compactions into level 0 and the base level write MEDIUM, the next
 * level LONG and the levels below EXTREME: four streams.
 *
 * HINT2STREAM_LOG=FILE appends one line per hint to FILE: "fd hint id
 * result fadvise", the results 0 or a negative errno, for checking what a
 * program asked for and got.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef F_SET_RW_HINT
#define F_SET_RW_HINT		(1024 + 12)
#endif
#ifndef POSIX_FADV_STREAMID
#define POSIX_FADV_STREAMID	8
#endif

/* Stream IDs of the hints NOT_SET, NONE, SHORT, MEDIUM, LONG, EXTREME. */
static int ids[6] = { 0, 0, 1, 2, 3, 4 };
static int (*real_fcntl)(int, int, ...);
static int (*real_fcntl64)(int, int, ...);

__attribute__((constructor))
static void hint2stream_init(void)
{
	const char *env = getenv("HINT2STREAM");
	int v[4], n = 0, i;
	char extra;

	real_fcntl = dlsym(RTLD_NEXT, "fcntl");
	real_fcntl64 = dlsym(RTLD_NEXT, "fcntl64");
	if (!env)
		return;
	if (sscanf(env, "%d,%d,%d,%d%c", &v[0], &v[1], &v[2], &v[3],
		   &extra) == 4)
		for (n = 0; n < 4 && v[n] >= 0 && v[n] <= 255; n++)
			;
	if (n != 4) {
		fprintf(stderr, "hint2stream: HINT2STREAM=%s: four IDs 0 to 255, S,M,L,E\n",
			env);
		return;
	}
	for (i = 0; i < 4; i++)
		ids[i + 2] = v[i];
}

static int set_hint(int (*fn)(int, int, ...), int fd, void *arg)
{
	const char *log = getenv("HINT2STREAM_LOG");
	int ret, id = -1, err, adv = 0, saved = errno;
	uint64_t hint;
	uint32_t low;

	if (!arg) {
		errno = EFAULT;
		return -1;
	}
	/*
	 * As the program asked first; where the kernel refuses that, the
	 * low 4 bytes, which are all of a 4-byte enum on little endian.
	 */
	memcpy(&hint, arg, sizeof(hint));
	ret = fn(fd, F_SET_RW_HINT, &hint);
	if (ret && errno == EINVAL) {
		memcpy(&low, arg, sizeof(low));
		hint = low;
		ret = fn(fd, F_SET_RW_HINT, &hint);
	}
	err = errno;
	if (!ret && hint < 6) {
		id = ids[hint];
		/* A file the kernel cannot tag (not open for writing) stays so. */
		adv = posix_fadvise(fd, id, 0, POSIX_FADV_STREAMID);
	}
	if (log) {
		FILE *f = fopen(log, "a");

		if (f) {
			fprintf(f, "%d %u %d %d %d\n", fd, (unsigned int)hint, id,
				ret ? -err : 0, -adv);
			fclose(f);
		}
	}
	errno = ret ? err : saved;
	return ret;
}

static int forward(int (*fn)(int, int, ...), int fd, int cmd, va_list ap)
{
	void *arg = va_arg(ap, void *);

	if (!fn) {
		/* Called before the constructor ran. */
		hint2stream_init();
		fn = real_fcntl;
	}
	if (!fn) {
		errno = EINVAL;
		return -1;
	}
	if (cmd == F_SET_RW_HINT)
		return set_hint(fn, fd, arg);
	/* Every fcntl argument is an int, a long or a pointer: one word. */
	return fn(fd, cmd, arg);
}

int fcntl(int fd, int cmd, ...)
{
	va_list ap;
	int ret;

	va_start(ap, cmd);
	ret = forward(real_fcntl, fd, cmd, ap);
	va_end(ap);
	return ret;
}

int fcntl64(int fd, int cmd, ...)
{
	va_list ap;
	int ret;

	va_start(ap, cmd);
	ret = forward(real_fcntl64 ? real_fcntl64 : real_fcntl, fd, cmd, ap);
	va_end(ap);
	return ret;
}
