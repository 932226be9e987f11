// SPDX-License-Identifier: GPL-2.0
/*
 * For "make bench": what opening a file for writing costs when its inode
 * is not in memory, which is when the series reads the stream ID the file
 * was given by its directory.  Creates the files DIR/0 .. DIR/N-1 if DIR/0
 * does not exist, drops the page cache and the inodes and dentries the
 * kernel caches, waits a second for their freeing to finish, then opens
 * each file for writing and closes it.  Prints the mean guest nanoseconds
 * of an open() and close(), and the sectors DISK read during them.
 *
 *	open-load DIR N DISK
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static void die(const char *what)
{
	perror(what);
	exit(1);
}

/* Sectors read that DISK completed: the 3rd field of its stat. */
static unsigned long long sectors_read(const char *disk)
{
	unsigned long long v[3];
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "/sys/block/%s/stat", disk);
	f = fopen(path, "r");
	if (!f || fscanf(f, "%llu %llu %llu", &v[0], &v[1], &v[2]) != 3)
		die(path);
	fclose(f);
	return v[2];
}

int main(int argc, char **argv)
{
	unsigned long long before, after;
	struct timespec t0, t1;
	char path[4096];
	long n, i;
	int fd;

	if (argc != 4) {
		fprintf(stderr, "usage: %s DIR N DISK\n", argv[0]);
		return 2;
	}
	n = atol(argv[2]);
	snprintf(path, sizeof(path), "%s/0", argv[1]);
	if (access(path, F_OK)) {
		for (i = 0; i < n; i++) {
			snprintf(path, sizeof(path), "%s/%ld", argv[1], i);
			fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
			if (fd < 0 || close(fd))
				die(path);
		}
	}
	sync();
	fd = open("/proc/sys/vm/drop_caches", O_WRONLY);
	if (fd < 0 || write(fd, "3", 1) != 1 || close(fd))
		die("drop_caches");
	sleep(1);

	before = sectors_read(argv[3]);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%ld", argv[1], i);
		fd = open(path, O_WRONLY);
		if (fd < 0 || close(fd))
			die(path);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	after = sectors_read(argv[3]);
	printf("%.1f %llu\n", ((t1.tv_sec - t0.tv_sec) * 1e9 +
	       (t1.tv_nsec - t0.tv_nsec)) / n, after - before);
	return 0;
}
