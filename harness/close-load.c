// SPDX-License-Identifier: GPL-2.0
/*
 * For "make bench": what close() of a file with dirty data costs, with a
 * stream ID and without.  Writes MIB MiB to a new file FILE, buffered,
 * with stream ID ID (0: not set, so that it runs on a kernel without the
 * series too), and closes it with the data still dirty.  Prints the guest
 * nanoseconds that close() took and the sectors DISK completed writing
 * during it; then syncs and removes the file.
 *
 *	close-load FILE MIB ID DISK
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define POSIX_FADV_STREAMID	8

static void die(const char *what)
{
	perror(what);
	exit(1);
}

/* Sectors written that DISK completed: the 7th field of its stat. */
static unsigned long long written(const char *disk)
{
	unsigned long long v[7];
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "/sys/block/%s/stat", disk);
	f = fopen(path, "r");
	if (!f || fscanf(f, "%llu %llu %llu %llu %llu %llu %llu", &v[0],
			 &v[1], &v[2], &v[3], &v[4], &v[5], &v[6]) != 7)
		die(path);
	fclose(f);
	return v[6];
}

int main(int argc, char **argv)
{
	static char buf[1 << 20];
	unsigned long long before, after;
	struct timespec t0, t1;
	long mib, i;
	int fd, id;

	if (argc != 5) {
		fprintf(stderr, "usage: %s FILE MIB ID DISK\n", argv[0]);
		return 2;
	}
	mib = atol(argv[2]);
	id = atoi(argv[3]);
	fd = open(argv[1], O_WRONLY | O_CREAT | O_EXCL, 0644);
	if (fd < 0)
		die(argv[1]);
	if (id) {
		errno = posix_fadvise(fd, id, 0, POSIX_FADV_STREAMID);
		if (errno)
			die("posix_fadvise(POSIX_FADV_STREAMID)");
	}
	memset(buf, 0x5a, sizeof(buf));
	for (i = 0; i < mib; i++)
		if (write(fd, buf, sizeof(buf)) != sizeof(buf))
			die("write");

	before = written(argv[4]);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (close(fd))
		die("close");
	clock_gettime(CLOCK_MONOTONIC, &t1);
	after = written(argv[4]);
	printf("%.1f %llu\n", (t1.tv_sec - t0.tv_sec) * 1e9 +
	       (t1.tv_nsec - t0.tv_nsec), after - before);

	sync();
	if (unlink(argv[1]))
		die("unlink");
	sync();
	return 0;
}
