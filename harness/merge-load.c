// SPDX-License-Identifier: GPL-2.0
/*
 * For "make bench": what the rule that bios of different stream IDs never
 * merge costs where merging matters most.  Sequential 4 KiB O_DIRECT
 * writes to DEV, submitted BATCH at a time with one io_submit() (which
 * plugs, so that adjacent writes merge into one request), alternating
 * between two descriptors of DEV with the stream IDs ID_A and ID_B
 * (0: not set, so that it runs on a kernel without the series too).
 * With two different IDs no write merges with its neighbour.
 * Prints the mean guest nanoseconds per write.
 *
 *	merge-load DEV WRITES BATCH ID_A ID_B
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/aio_abi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define POSIX_FADV_STREAMID	8
#define BS			4096
#define MAX_BATCH		256

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static int open_tagged(const char *dev, int id)
{
	int fd = open(dev, O_WRONLY | O_DIRECT);

	if (fd < 0)
		die(dev);
	if (id) {
		errno = posix_fadvise(fd, id, 0, POSIX_FADV_STREAMID);
		if (errno)
			die("posix_fadvise(POSIX_FADV_STREAMID)");
	}
	return fd;
}

int main(int argc, char **argv)
{
	static struct iocb cbs[MAX_BATCH];
	struct io_event events[MAX_BATCH];
	struct iocb *list[MAX_BATCH];
	long writes, batch, done, i, n;
	struct timespec t0, t1;
	aio_context_t ctx = 0;
	off_t size, off = 0;
	int fd[2];
	void *buf;

	if (argc != 6) {
		fprintf(stderr, "usage: %s DEV WRITES BATCH ID_A ID_B\n",
			argv[0]);
		return 2;
	}
	writes = atol(argv[2]);
	batch = atol(argv[3]);
	if (writes <= 0 || batch <= 0 || batch > MAX_BATCH) {
		fprintf(stderr, "merge-load: WRITES > 0, 0 < BATCH <= %d\n",
			MAX_BATCH);
		return 2;
	}
	fd[0] = open_tagged(argv[1], atoi(argv[4]));
	fd[1] = open_tagged(argv[1], atoi(argv[5]));
	size = lseek(fd[0], 0, SEEK_END);
	if (size < BS * MAX_BATCH)
		die("device too small");
	if (posix_memalign(&buf, BS, BS))
		die("posix_memalign");
	memset(buf, 0x5a, BS);
	if (syscall(SYS_io_setup, batch, &ctx))
		die("io_setup");

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (done = 0; done < writes; done += n) {
		n = writes - done < batch ? writes - done : batch;
		if (off + n * BS > size)
			off = 0;
		for (i = 0; i < n; i++) {
			memset(&cbs[i], 0, sizeof(cbs[i]));
			cbs[i].aio_fildes = fd[i & 1];
			cbs[i].aio_lio_opcode = IOCB_CMD_PWRITE;
			cbs[i].aio_buf = (unsigned long)buf;
			cbs[i].aio_nbytes = BS;
			cbs[i].aio_offset = off;
			off += BS;
			list[i] = &cbs[i];
		}
		if (syscall(SYS_io_submit, ctx, n, list) != n)
			die("io_submit");
		if (syscall(SYS_io_getevents, ctx, n, n, events, NULL) != n)
			die("io_getevents");
		for (i = 0; i < n; i++)
			if (events[i].res != BS) {
				fprintf(stderr, "merge-load: write: %lld\n",
					(long long)events[i].res);
				return 1;
			}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("%.1f\n", ((t1.tv_sec - t0.tv_sec) * 1e9 +
			  (t1.tv_nsec - t0.tv_nsec)) / writes);
	return 0;
}
