/* SPDX-License-Identifier: GPL-2.0 */
/* Helpers shared by the stream ID selftests. */
#ifndef STREAMID_SELFTEST_H
#define STREAMID_SELFTEST_H

#include <endian.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#ifndef POSIX_FADV_STREAMID
#define POSIX_FADV_STREAMID	8
#endif
#ifndef BLKRRPART
#define BLKRRPART	_IO(0x12, 95)
#endif

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

/*
 * The queue limit @name (max_write_streams, write_stream_granularity,
 * ...) of the block device node @dev, a number; -1 if there is none.
 */
static inline long long queue_limit(const char *dev, const char *name)
{
	char path[160], buf[32];
	struct stat st;

	if (stat(dev, &st) || !S_ISBLK(st.st_mode))
		return -1;
	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/queue/%s",
		 major(st.st_rdev), minor(st.st_rdev), name);
	if (read_file(path, buf, sizeof(buf)) <= 0)
		return -1;
	return atoll(buf);
}

#define NULLB "/sys/kernel/config/nullb"
#define MAX_IDS 256

struct stats {
	unsigned long long requests[MAX_IDS];
	unsigned long long sectors[MAX_IDS];
};

static inline int write_attr(const char *dir, const char *name,
			     const char *val)
{
	char path[512];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -1;
	n = write(fd, val, strlen(val));
	close(fd);
	return n == (ssize_t)strlen(val) ? 0 : -1;
}

/* The stream ID /proc/self/fdinfo shows for @fd; 0 when it shows none. */
static inline int fdinfo_streamid(int fd)
{
	char path[64], buf[4096], *p;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	if (read_file(path, buf, sizeof(buf)) < 0)
		return -1;
	p = strstr(buf, "streamid:\t");
	return p ? atoi(p + strlen("streamid:\t")) : 0;
}

/* Parse stream_stats; -1 if a line is malformed or names an ID twice. */
static inline int read_stats(const char *dir, struct stats *st)
{
	char path[512], buf[16384], *line;
	unsigned long long req, sec;
	unsigned int id;

	memset(st, 0, sizeof(*st));
	snprintf(path, sizeof(path), "%s/stream_stats", dir);
	if (read_file(path, buf, sizeof(buf)) < 0)
		return -1;
	for (line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
		if (sscanf(line, "%u %llu %llu", &id, &req, &sec) != 3 ||
		    id >= MAX_IDS || st->requests[id] || !req)
			return -1;
		st->requests[id] = req;
		st->sectors[id] = sec;
	}
	return 0;
}

/* A recognisable pattern for the bytes at @off of the device. */
static inline void fill(char *buf, size_t len, off_t off, int id)
{
	size_t i;

	for (i = 0; i < len; i++)
		buf[i] = (char)((off + i) * 7 + id * 13 + (off + i) / 4096);
}

/* Open the device and give the file stream @id (none for 0). */
static inline int open_stream(const char *dev, int flags, int id)
{
	int fd = open(dev, flags);

	if (fd >= 0 && id && posix_fadvise(fd, id, 0, POSIX_FADV_STREAMID)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Write @len bytes of the pattern for @id at @off; 0 on success. */
static inline int write_at(int fd, off_t off, size_t len, int id)
{
	void *buf;
	int ret;

	if (posix_memalign(&buf, 4096, len))
		return -1;
	fill(buf, len, off, id);
	ret = pwrite(fd, buf, len, off) == (ssize_t)len ? 0 : -1;
	free(buf);
	return ret;
}

/* Read back with O_DIRECT: the pattern for @id at @off; 0 if it is. */
static inline int check_at(const char *dev, off_t off, size_t len, int id)
{
	void *got, *want;
	int fd, ret = -1;

	fd = open(dev, O_RDONLY | O_DIRECT);
	if (fd < 0)
		return -1;
	if (!posix_memalign(&got, 4096, len)) {
		want = malloc(len);
		if (want) {
			fill(want, len, off, id);
			if (pread(fd, got, len, off) == (ssize_t)len)
				ret = memcmp(got, want, len) ? -1 : 0;
			free(want);
		}
		free(got);
	}
	close(fd);
	return ret;
}

/* Every stream ID but those in @ids (ended by -1) received nothing. */
static inline int only(const struct stats *st, const int *ids)
{
	int id, i, listed;

	for (id = 0; id < MAX_IDS; id++) {
		for (listed = 0, i = 0; ids[i] >= 0; i++)
			listed |= ids[i] == id;
		if (!listed && st->requests[id])
			return id;
	}
	return -1;
}

/*
 * Make null_blk device @name, not yet powered on: @mib MiB, memory-backed,
 * with @streams streams.  Its configfs directory in @dir.
 */
static inline int nullb_new(const char *name, int mib, int streams,
			    char *dir, size_t dirlen)
{
	char buf[64];

	snprintf(dir, dirlen, NULLB "/%s", name);
	if (mkdir(dir, 0755))
		return -1;
	snprintf(buf, sizeof(buf), "%d", mib);
	if (write_attr(dir, "size", buf) ||
	    write_attr(dir, "memory_backed", "1"))
		return -1;
	snprintf(buf, sizeof(buf), "%d", streams);
	return write_attr(dir, "streams", buf);
}

/* Power on the device of nullb_new(); its device node in @dev. */
static inline int nullb_power_on(const char *dir, char *dev, size_t devlen)
{
	if (write_attr(dir, "power", "1"))
		return -1;
	/* The disk is named after its configfs directory. */
	snprintf(dev, devlen, "/dev/%s", strrchr(dir, '/') + 1);
	return access(dev, F_OK);
}

/*
 * Make and power on null_blk device @name: @mib MiB, memory-backed, with
 * @streams streams and requests of at most @max_sectors (0: default).
 * Its configfs directory in @dir, its device node in @dev.
 */
static inline int nullb_create(const char *name, int mib, int streams,
			       int max_sectors, char *dir, size_t dirlen,
			       char *dev, size_t devlen)
{
	char buf[64];

	if (nullb_new(name, mib, streams, dir, dirlen))
		return -1;
	snprintf(buf, sizeof(buf), "%d", max_sectors);
	if (max_sectors && write_attr(dir, "max_sectors", buf))
		return -1;
	return nullb_power_on(dir, dev, devlen);
}

static inline int nullb_remove(const char *dir)
{
	write_attr(dir, "power", "0");
	return rmdir(dir);
}

#define PART_SECTORS	65536

/*
 * Write an MS-DOS partition table of two partitions of PART_SECTORS
 * each, from sector 2048, through @fd and have the kernel read it.
 */
static inline int make_partitions(int fd)
{
	unsigned char mbr[512] = { };
	__u32 lba[2];
	int i;

	for (i = 0; i < 2; i++) {
		lba[0] = htole32(2048 + i * PART_SECTORS);
		lba[1] = htole32(PART_SECTORS);
		mbr[446 + 16 * i + 4] = 0x83;
		memcpy(&mbr[446 + 16 * i + 8], lba, sizeof(lba));
	}
	mbr[510] = 0x55;
	mbr[511] = 0xaa;
	if (pwrite(fd, mbr, sizeof(mbr), 0) != sizeof(mbr) || fsync(fd))
		return -1;
	return ioctl(fd, BLKRRPART);
}

#endif /* STREAMID_SELFTEST_H */
