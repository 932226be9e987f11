// SPDX-License-Identifier: GPL-2.0
/*
 * The workloads of "make waf", run in the guest.  Each writes the same
 * data in the same order with stream IDs (-s) or without; nothing else
 * differs.
 *
 * Usage: waf-load [-s] [-r SEED] writers DIR DEVICE_WRITES
 *        waf-load [-s] [-r SEED] cache BLOCKDEV DEVICE_WRITES
 *        waf-load [-s] [-r SEED] dbfile DIR DEVICE_WRITES
 *        waf-load [-r SEED] tenants DIR DEVICE_WRITES CGROUP1 CGROUP2
 *
 * writers: four writers append at once, 4 to 64 KiB at a time with
 *   O_DIRECT, to files of four lifetime classes (1, 10, 33 and 55 time
 *   units; IDs 1 to 4); each file is deleted when its lifetime ends.  Each
 *   class writes at the same rate; the live data fills 85 % of the file
 *   system.  A time unit is a fixed amount of data written.
 * cache: half of the data random 4 KiB overwrites of a hot region, the
 *   first 5 % of the device (ID 1), half a sequential log of 256 KiB
 *   writes over the rest (ID 2), in random order, O_DIRECT on the block
 *   device, which is first written once in full.
 * dbfile: a database file of 70 % of the file system, written once, then
 *   overwritten at random, 8 KiB at a time through the page cache with an
 *   fsync every 64 writes; its data in ID 1, the file system's metadata
 *   and journal as the file system writes them.
 * tenants: two programs that place nothing themselves, each in a cgroup
 *   of its own (the cgroup v2 directories CGROUP1 and CGROUP2), which the
 *   caller may give an io.stream: a cache, random 4 KiB overwrites of a
 *   file of 5 % of the file system, written once first; and an archive,
 *   files of 8 MiB written in 128 KiB writes, each kept until the live
 *   data would exceed 85 % of the file system, then deleted, oldest
 *   first.  Both write O_DIRECT, as virtual machines do to their disk
 *   images (cache=none), at the same rate (neither more than 64 KiB
 *   ahead), each half of the bytes.
 * DEVICE_WRITES: how much to write, in multiples of the device (the file
 * system) size.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <linux/fs.h>
#include <unistd.h>

#ifndef POSIX_FADV_STREAMID
#define POSIX_FADV_STREAMID 8
#endif

#define KIB 1024ULL
#define MIB (1024 * KIB)

static int streams;
static uint64_t rng = 1;
static char *buf;

static void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "waf-load: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	if (errno)
		fprintf(stderr, ": %s", strerror(errno));
	fputc('\n', stderr);
	exit(1);
}

static uint64_t rnd(uint64_t n)
{
	uint64_t z = (rng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return (z ^ (z >> 31)) % n;
}

static void tag(int fd, int id)
{
	if (streams && posix_fadvise(fd, id, 0, POSIX_FADV_STREAMID))
		die("fadvise stream %d", id);
}

static void pwrite_all(int fd, uint64_t len, uint64_t off)
{
	ssize_t n;

	/* Different data every time, so nothing can dedupe or compress it. */
	memcpy(buf, &rng, sizeof(rng));
	n = pwrite(fd, buf, len, off);
	if (n != (ssize_t)len)
		die("write of %llu bytes at %llu", (unsigned long long)len,
		    (unsigned long long)off);
}

static uint64_t fs_size(const char *dir)
{
	struct statvfs st;

	if (statvfs(dir, &st))
		die("statvfs %s", dir);
	return (uint64_t)st.f_blocks * st.f_frsize;
}

/* --- writers ------------------------------------------------------------ */

#define CLASSES 4
static const unsigned int lifetime[CLASSES] = { 1, 10, 33, 55 };

struct file {
	char name[64];
	uint64_t born;		/* bytes written by all when it was created */
};

struct class {
	int fd;
	uint64_t size, born;
	struct file live[64];	/* the files of the class, oldest first */
	unsigned int nr_live, seq;
};

static void writers(const char *dir, double device_writes)
{
	uint64_t total = fs_size(dir), per_class, unit, written = 0, end;
	struct class cls[CLASSES] = { 0 };
	unsigned int c, i;

	/* Live data: per class its rate times its lifetime; 85 % in all. */
	per_class = total * 85 / 100 / (1 + 10 + 33 + 55);
	per_class -= per_class % (64 * KIB);
	unit = CLASSES * per_class;
	end = device_writes * total;
	if (chdir(dir))
		die("chdir %s", dir);
	for (c = 0; c < CLASSES; c++)
		cls[c].fd = -1;
	while (written < end) {
		for (c = 0; c < CLASSES; c++) {
			struct class *k = &cls[c];
			uint64_t len = 4 * KIB * (1 + rnd(16));

			/*
			 * Files whose lifetime ended go, with discard: the
			 * oldest, which is closed, as a file takes a unit to
			 * write and lives at least one.
			 */
			while (k->nr_live &&
			       k->live[0].born + lifetime[c] * unit <= written &&
			       (k->nr_live > 1 || k->fd < 0)) {
				if (unlink(k->live[0].name))
					die("unlink %s", k->live[0].name);
				memmove(k->live, k->live + 1,
					--k->nr_live * sizeof(k->live[0]));
			}
			if (k->fd < 0) {
				struct file *f = &k->live[k->nr_live++];

				if (k->nr_live > 64)
					die("too many files");
				snprintf(f->name, sizeof(f->name),
					 "class%u-%06u", c + 1, k->seq++);
				f->born = written;
				k->fd = open(f->name, O_WRONLY | O_CREAT |
					     O_TRUNC | O_DIRECT, 0644);
				if (k->fd < 0)
					die("open %s", f->name);
				tag(k->fd, c + 1);
				k->size = 0;
			}
			if (len > per_class - k->size)
				len = per_class - k->size;
			pwrite_all(k->fd, len, k->size);
			k->size += len;
			written += len;
			if (k->size == per_class) {
				if (fsync(k->fd) || close(k->fd))
					die("close");
				k->fd = -1;
			}
		}
	}
	for (c = 0; c < CLASSES; c++) {
		if (cls[c].fd >= 0 && close(cls[c].fd))
			die("close");
		for (i = 0; i < cls[c].nr_live; i++)
			unlink(cls[c].live[i].name);
	}
	sync();
}

/* --- cache ---------------------------------------------------------------- */

static void cache(const char *dev, double device_writes)
{
	uint64_t size, hot, log_pos, hot_bytes = 0, log_bytes = 0, end, off;
	const uint64_t log_len = 256 * KIB;
	int fd_hot, fd_log;

	fd_hot = open(dev, O_WRONLY | O_DIRECT);
	fd_log = open(dev, O_WRONLY | O_DIRECT);
	if (fd_hot < 0 || fd_log < 0)
		die("open %s", dev);
	if (ioctl(fd_hot, BLKGETSIZE64, &size))
		die("BLKGETSIZE64");
	hot = size * 5 / 100;
	hot -= hot % log_len;
	tag(fd_hot, 1);
	tag(fd_log, 2);
	/* The whole device once, each region in its own stream. */
	for (off = 0; off + log_len <= size; off += log_len)
		pwrite_all(off < hot ? fd_hot : fd_log, log_len, off);
	end = device_writes * size;
	log_pos = hot;
	while (hot_bytes + log_bytes < end) {
		/*
		 * Which one writes next is random, the log as often as gives
		 * it half of the bytes: no pattern that a device could
		 * align its erase blocks to.
		 */
		if (rnd(log_len + 4 * KIB) >= 4 * KIB) {
			pwrite_all(fd_hot, 4 * KIB, rnd(hot / (4 * KIB)) * 4 * KIB);
			hot_bytes += 4 * KIB;
		} else {
			if (log_pos + log_len > size)
				log_pos = hot;
			pwrite_all(fd_log, log_len, log_pos);
			log_pos += log_len;
			log_bytes += log_len;
		}
	}
	if (fsync(fd_hot) || close(fd_hot) || close(fd_log))
		die("close");
}

/* --- dbfile --------------------------------------------------------------- */

static void dbfile(const char *dir, double device_writes)
{
	uint64_t total = fs_size(dir), size = total * 70 / 100, off, written;
	const uint64_t len = 8 * KIB;
	unsigned int n = 0;
	int fd;

	size -= size % MIB;
	if (chdir(dir))
		die("chdir %s", dir);
	fd = open("db", O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		die("open db");
	tag(fd, 1);
	for (off = 0; off < size; off += MIB)
		pwrite_all(fd, MIB, off);
	if (fsync(fd))
		die("fsync");
	for (written = size; written < device_writes * total; written += len) {
		pwrite_all(fd, len, rnd(size / len) * len);
		if (++n % 64 == 0 && fsync(fd))
			die("fsync");
	}
	if (fsync(fd) || close(fd))
		die("close");
}

/* --- tenants ------------------------------------------------------------- */

/* What each tenant has written, shared: neither runs ahead of the other. */
static volatile uint64_t *tenant_bytes;

static void tenant_enter(const char *cgroup)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/cgroup.procs", cgroup);
	f = fopen(path, "w");
	if (!f || fprintf(f, "0\n") < 0 || fclose(f))
		die("enter %s", cgroup);
}

/* Tenant @me has written @len more; wait while it is 64 KiB ahead. */
static void tenant_wrote(int me, uint64_t len)
{
	__atomic_add_fetch(&tenant_bytes[me], len, __ATOMIC_RELAXED);
	while (__atomic_load_n(&tenant_bytes[me], __ATOMIC_RELAXED) >
	       __atomic_load_n(&tenant_bytes[!me], __ATOMIC_RELAXED) +
	       64 * KIB &&
	       !__atomic_load_n(&tenant_bytes[2 + !me], __ATOMIC_RELAXED))
		sched_yield();
}

static void tenant_cache(uint64_t total, uint64_t end)
{
	uint64_t size = total * 5 / 100, off, written = 0;
	int fd;

	size -= size % MIB;
	fd = open("cache", O_WRONLY | O_CREAT | O_TRUNC | O_DIRECT, 0644);
	if (fd < 0)
		die("open cache");
	for (off = 0; off < size; off += MIB) {
		pwrite_all(fd, MIB, off);
		tenant_wrote(0, MIB);
	}
	for (written = size; written < end; written += 4 * KIB) {
		pwrite_all(fd, 4 * KIB, rnd(size / (4 * KIB)) * 4 * KIB);
		tenant_wrote(0, 4 * KIB);
	}
	if (fsync(fd) || close(fd))
		die("close cache");
}

static void tenant_archive(uint64_t total, uint64_t end)
{
	const uint64_t file = 8 * MIB, len = 128 * KIB;
	uint64_t keep = (total * 80 / 100) / file, written = 0, off;
	unsigned int first = 0, next = 0;
	char name[32];
	int fd;

	while (written < end) {
		while (next - first >= keep) {
			snprintf(name, sizeof(name), "archive-%06u", first++);
			if (unlink(name))
				die("unlink %s", name);
		}
		snprintf(name, sizeof(name), "archive-%06u", next++);
		fd = open(name, O_WRONLY | O_CREAT | O_TRUNC | O_DIRECT, 0644);
		if (fd < 0)
			die("open %s", name);
		for (off = 0; off < file; off += len) {
			pwrite_all(fd, len, off);
			tenant_wrote(1, len);
		}
		if (fdatasync(fd) || close(fd))
			die("close %s", name);
		written += file;
	}
}

static void tenants(const char *dir, double device_writes, char **cgroups)
{
	uint64_t total = fs_size(dir), end = device_writes * total / 2;
	pid_t pid[2];
	int i, status, ret = 0;

	if (chdir(dir))
		die("chdir %s", dir);
	/* Bytes of tenant 0 and 1, and whether each is done. */
	tenant_bytes = mmap(NULL, 4 * sizeof(uint64_t), PROT_READ | PROT_WRITE,
			    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (tenant_bytes == MAP_FAILED)
		die("mmap");
	for (i = 0; i < 2; i++) {
		pid[i] = fork();
		if (pid[i] < 0)
			die("fork");
		if (!pid[i]) {
			rng += i + 1;
			tenant_enter(cgroups[i]);
			if (i)
				tenant_archive(total, end);
			else
				tenant_cache(total, end);
			__atomic_store_n(&tenant_bytes[2 + i], 1,
					 __ATOMIC_RELAXED);
			exit(0);
		}
	}
	for (i = 0; i < 2; i++)
		if (waitpid(pid[i], &status, 0) != pid[i] ||
		    !WIFEXITED(status) || WEXITSTATUS(status))
			ret = 1;
	if (ret)
		die("a tenant failed");
	sync();
}

int main(int argc, char **argv)
{
	double device_writes;
	int opt;

	while ((opt = getopt(argc, argv, "sr:")) != -1) {
		switch (opt) {
		case 's':
			streams = 1;
			break;
		case 'r':
			rng = strtoull(optarg, NULL, 0);
			break;
		default:
			goto usage;
		}
	}
	if (argc - optind != 3 &&
	    !(argc - optind == 5 && !strcmp(argv[optind], "tenants")))
		goto usage;
	device_writes = strtod(argv[optind + 2], NULL);
	if (device_writes <= 0)
		goto usage;
	if (posix_memalign((void **)&buf, 4096, MIB))
		die("memory");
	memset(buf, 0x5a, MIB);
	if (!strcmp(argv[optind], "writers"))
		writers(argv[optind + 1], device_writes);
	else if (!strcmp(argv[optind], "cache"))
		cache(argv[optind + 1], device_writes);
	else if (!strcmp(argv[optind], "dbfile"))
		dbfile(argv[optind + 1], device_writes);
	else if (!strcmp(argv[optind], "tenants") && argc - optind == 5)
		tenants(argv[optind + 1], device_writes, argv + optind + 3);
	else
		goto usage;
	return 0;
usage:
	fprintf(stderr, "usage: waf-load [-s] [-r SEED] writers|cache|dbfile PATH DEVICE_WRITES\n"
		"       waf-load [-r SEED] tenants DIR DEVICE_WRITES CGROUP1 CGROUP2\n");
	return 2;
}
