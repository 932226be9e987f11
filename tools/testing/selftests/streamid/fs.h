/* SPDX-License-Identifier: GPL-2.0 */
/*
 * File systems for the stream ID selftests: how to make, mount and check
 * each one, and a writer of several files with their own streams at once.
 */
#ifndef STREAMID_FS_H
#define STREAMID_FS_H

#include <linux/types.h>
#include <stdbool.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "streamid.h"

struct fs_type {
	const char *name;
	/* mkfs command; "%s" is the device list */
	const char *mkfs;
	/* read-only check; "%s" is the first device */
	const char *fsck;
};

static const struct fs_type fs_ext4 = {
	"ext4", "mkfs.ext4 -q -F -E nodiscard %s", "e2fsck -fn %s",
};

static const struct fs_type fs_xfs = {
	"xfs", "mkfs.xfs -q -f -K %s", "xfs_repair -n %s",
};

static const struct fs_type fs_btrfs = {
	"btrfs", "mkfs.btrfs -q -f -K %s", "btrfs check --readonly %s",
};

/* Run the command @fmt makes of @arg, quietly; its exit status. */
static inline int run(const char *fmt, const char *arg)
{
	char cmd[1024];
	int n;

	n = snprintf(cmd, sizeof(cmd) - 20, fmt, arg);
	if (n < 0 || n >= (int)sizeof(cmd) - 20)
		return -1;
	strcat(cmd, " >/dev/null 2>&1");
	return system(cmd);
}

/* Whether the mkfs command of @fs is installed. */
static inline bool fs_have_mkfs(const struct fs_type *fs)
{
	char cmd[64];

	snprintf(cmd, sizeof(cmd), "command -v %.*s",
		 (int)strcspn(fs->mkfs, " "), fs->mkfs);
	return !run("%s", cmd);
}

/* Mount @dev (the first of the file system's devices) on @mnt. */
static inline int fs_mount(const struct fs_type *fs, const char *dev,
			   const char *mnt, const char *opts)
{
	return mount(dev, mnt, fs->name, 0, opts);
}

#ifndef __NR_cachestat
#define __NR_cachestat	451
#endif

struct fs_cachestat_range {
	__u64 off, len;
};

struct fs_cachestat {
	__u64 nr_cache, nr_dirty, nr_writeback, nr_evicted, nr_recently_evicted;
};

/* Wait, at most @secs s, until no page of the files is dirty or in flight. */
static inline int fs_wait_clean(const char *mnt, const int *ids, int n,
				int secs)
{
	struct fs_cachestat_range all = { 0, 0 };
	struct fs_cachestat cs;
	char path[300];
	int i, t, busy = 1, fd, ret;

	for (t = 0; t < secs * 10 && busy; t++) {
		usleep(100000);
		for (busy = 0, i = 0; i < n; i++) {
			snprintf(path, sizeof(path), "%s/f%d", mnt, ids[i]);
			fd = open(path, O_RDONLY);
			if (fd < 0)
				return -1;
			ret = syscall(__NR_cachestat, fd, &all, &cs, 0);
			close(fd);
			if (ret)
				return -1;
			busy += cs.nr_dirty || cs.nr_writeback;
		}
	}
	return busy ? -1 : 0;
}

#define FS_VM	"/proc/sys/vm"

/* The writeback settings that FLUSH_BACKGROUND changes, to restore. */
struct fs_dirty {
	char expire[32], interval[32];
};

static inline int fs_dirty_save(struct fs_dirty *d)
{
	if (read_file(FS_VM "/dirty_expire_centisecs", d->expire,
		      sizeof(d->expire)) <= 0 ||
	    read_file(FS_VM "/dirty_writeback_centisecs", d->interval,
		      sizeof(d->interval)) <= 0) {
		d->expire[0] = '\0';
		return -1;
	}
	return 0;
}

static inline int fs_dirty_restore(const struct fs_dirty *d)
{
	if (!d->expire[0])
		return 0;
	return write_attr(FS_VM, "dirty_expire_centisecs", d->expire) ||
	       write_attr(FS_VM, "dirty_writeback_centisecs", d->interval);
}

enum fs_flush {
	FLUSH_FSYNC,		/* each writer calls fsync() */
	FLUSH_SYNC,		/* sync() once every writer is done */
	FLUSH_BACKGROUND,	/* left to the flusher (see fs_dirty_save()) */
	FLUSH_DIRECT,		/* O_DIRECT writes, then fsync() */
};

/*
 * Write @mib MiB of the pattern for @pattern to @path with stream @id.
 * With @ready >= 0, then say so with one byte on @ready (0: written) and
 * keep the file open until @hold, the read end of a pipe, gives EOF.
 */
static inline int fs_write_file_held(const char *path, int id, int mib,
				     int pattern, enum fs_flush flush,
				     int ready, int hold)
{
	int flags = flush == FLUSH_DIRECT ? O_DIRECT : 0;
	int fd, i, ret = 0;
	char c;

	fd = open(path, O_WRONLY | O_CREAT | flags, 0644);
	if (fd < 0 || posix_fadvise(fd, id, 0, POSIX_FADV_STREAMID))
		ret = -1;
	for (i = 0; i < mib && !ret; i++)
		ret = write_at(fd, (off_t)i << 20, 1 << 20, pattern);
	if (!ret && (flush == FLUSH_FSYNC || flush == FLUSH_DIRECT))
		ret = fsync(fd);
	/* Said also after a failure, or the one waiting would wait forever. */
	if (ready >= 0) {
		c = !!ret;
		if (write(ready, &c, 1) != 1)
			ret = -1;
		while (read(hold, &c, 1) > 0)
			;
	}
	if (fd >= 0 && close(fd))
		ret = -1;
	return ret;
}

static inline int fs_write_file(const char *path, int id, int mib,
				int pattern, enum fs_flush flush)
{
	return fs_write_file_held(path, id, mib, pattern, flush, -1, -1);
}

/*
 * Write file i of @n, "@mnt/f<id>", with stream ids[i] and @mib MiB, all
 * at once, one process each, and flush as @flush says.  For FLUSH_SYNC
 * and FLUSH_BACKGROUND the writers keep their files open until the flush
 * is done, so that sync() or the flusher writes the data back, not the
 * last close.  0 when every writer succeeded.
 */
static inline int fs_write_files(const char *mnt, const int *ids, int n,
				 int mib, enum fs_flush flush)
{
	bool held = flush == FLUSH_SYNC || flush == FLUSH_BACKGROUND;
	int ready[2] = { -1, -1 }, hold[2] = { -1, -1 };
	int i, status, ret = 0;
	char path[300], c;
	pid_t pid;

	/* Dirty data expires after 1 s, and the flusher looks every 0.5 s. */
	if (flush == FLUSH_BACKGROUND &&
	    (write_attr(FS_VM, "dirty_expire_centisecs", "100") ||
	     write_attr(FS_VM, "dirty_writeback_centisecs", "50")))
		return -1;
	if (held && (pipe(ready) || pipe(hold)))
		return -1;
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/f%d", mnt, ids[i]);
		pid = fork();
		if (pid < 0)
			return -1;
		if (!pid) {
			if (held)
				close(hold[1]);
			_exit(fs_write_file_held(path, ids[i], mib, ids[i],
						 flush, ready[1], hold[0]) ?
			      1 : 0);
		}
	}
	if (held) {
		close(ready[1]);
		close(hold[0]);
		/* Every writer has written, and holds its file open. */
		for (i = 0; i < n; i++)
			if (read(ready[0], &c, 1) != 1 || c)
				ret = -1;
		close(ready[0]);
		if (flush == FLUSH_SYNC)
			sync();
		if (!ret && flush == FLUSH_BACKGROUND)
			ret = fs_wait_clean(mnt, ids, n, 60);
		close(hold[1]);
	}
	for (i = 0; i < n; i++)
		if (wait(&status) < 0 || !WIFEXITED(status) ||
		    WEXITSTATUS(status))
			ret = -1;
	return ret;
}

/* Every file "@mnt/f<id>" reads back as fs_write_files() wrote it. */
static inline int fs_check_files(const char *mnt, const int *ids, int n,
				 int mib)
{
	char path[300];
	int i, j;

	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/f%d", mnt, ids[i]);
		for (j = 0; j < mib; j++)
			if (check_at(path, (off_t)j << 20, 1 << 20, ids[i]))
				return -1;
	}
	return 0;
}

#endif /* STREAMID_FS_H */
