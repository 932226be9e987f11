/* SPDX-License-Identifier: GPL-2.0 */
/* Helpers shared by the stream ID selftests. */
#ifndef STREAMID_SELFTEST_H
#define STREAMID_SELFTEST_H

#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

/*
 * Read a file, at most @size - 1 bytes of it, into @buf as a string
 * without its trailing newline and blanks; its length, or -1.
 */
static inline int read_file(const char *path, char *buf, size_t size)
{
	ssize_t n = 0, r;
	int fd;

	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	do {
		r = read(fd, buf + n, size - 1 - n);
		if (r > 0)
			n += r;
	} while (r > 0 && n < (ssize_t)size - 1);
	close(fd);
	if (r < 0)
		return -1;
	buf[n] = '\0';
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	return n;
}

/* Field @i (0-based) of /sys/block/<disk>/stat. */
static inline unsigned long long disk_stat(const char *disk, int i)
{
	unsigned long long v[11] = { 0 };
	char path[512], buf[512];

	snprintf(path, sizeof(path), "/sys/block/%s/stat", disk);
	if (read_file(path, buf, sizeof(buf)) < 0 ||
	    sscanf(buf, "%llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu",
		   &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7],
		   &v[8], &v[9], &v[10]) != 11)
		return ~0ULL;
	return v[i];
}

#endif /* STREAMID_SELFTEST_H */
