// SPDX-License-Identifier: GPL-2.0
/*
 * ext4, xfs and btrfs on null_blk devices with streams: files with
 * different stream IDs, written at the same time, buffered (then fsync,
 * sync, or left to background writeback) and with O_DIRECT, land in
 * their own streams, all of each file's data and nothing else; the file
 * system's own metadata and journal carry no stream.  btrfs also with
 * compression and with RAID1 over two devices, where both copies are
 * tagged.  After each test the data reads back after a remount and the
 * file system's checker finds it clean.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "fs.h"

#define FILE_MIB	4
#define FILE_SECTORS	(FILE_MIB * 2048ULL)
#define DEV_MIB		512
#define MAX_DEVS	2
#define NR_FILES	4

/* The devices, mount point and settings of one test. */
struct fs_env {
	char dir[MAX_DEVS][256];
	char dev[MAX_DEVS][128];
	char mnt[64];
	char opts[300];
	struct fs_dirty dirty;
};

FIXTURE(fs) {
	struct fs_env e;
};

/* A file system and how it is made and mounted. */
struct fs_variant {
	const struct fs_type *fs;
	const char *mkfs_args;
	const char *opts;
	int devices;
	bool compressed;
	/* direct writes become buffered ones, with the inode's ID */
	bool direct_buffered;
	/* a small file's data is kept in metadata */
	bool inline_small;
};

FIXTURE_VARIANT(fs) {
	struct fs_variant v;
};

FIXTURE_VARIANT_ADD(fs, ext4) { .v = { .fs = &fs_ext4, .devices = 1 } };
FIXTURE_VARIANT_ADD(fs, xfs) { .v = { .fs = &fs_xfs, .devices = 1 } };
/* btrfs writes direct I/O to files with data checksums as buffered. */
FIXTURE_VARIANT_ADD(fs, btrfs) { .v = {
	.fs = &fs_btrfs, .devices = 1, .direct_buffered = true,
	.inline_small = true,
} };
FIXTURE_VARIANT_ADD(fs, btrfs_zstd) { .v = {
	.fs = &fs_btrfs, .devices = 1, .opts = "compress-force=zstd",
	.compressed = true, .direct_buffered = true, .inline_small = true,
} };
FIXTURE_VARIANT_ADD(fs, btrfs_raid1) { .v = {
	.fs = &fs_btrfs, .devices = 2, .mkfs_args = "-d raid1 -m raid1",
	.direct_buffered = true, .inline_small = true,
} };

/* Start the counters of every device afresh. */
static int reset_stats(struct fs_env *self)
{
	int i;

	for (i = 0; i < MAX_DEVS && self->dir[i][0]; i++)
		if (write_attr(self->dir[i], "stream_stats", "0"))
			return -1;
	return 0;
}

/*
 * Open @path for writing without setting an ID, write 1 MiB of the
 * pattern for @pattern at @off, fsync and close: 0 on success.  What the
 * data gets is whatever ID the inode still has.
 */
static int write_untagged(const char *path, off_t off, int pattern)
{
	int fd = open(path, O_WRONLY), ret;

	if (fd < 0)
		return -1;
	ret = write_at(fd, off, 1 << 20, pattern) || fsync(fd) ? -1 : 0;
	return close(fd) ? -1 : ret;
}

/* Make the variant's file system on new null_blk devices and mount it. */
static void fs_up(struct __test_metadata *_metadata, struct fs_env *self,
		  const struct fs_variant *variant)
{
	char name[64], devs[300] = "";
	int i;

	if (access(NULLB, F_OK))
		SKIP(return, "no null_blk configfs");
	if (!fs_have_mkfs(variant->fs))
		SKIP(return, "no mkfs for %s", variant->fs->name);

	snprintf(devs, sizeof(devs), "%s", variant->mkfs_args ?: "");
	for (i = 0; i < variant->devices; i++) {
		snprintf(name, sizeof(name), "fs%d_%d", i, getpid());
		ASSERT_EQ(0, nullb_create(name, DEV_MIB, 16, 0, self->dir[i],
					  sizeof(self->dir[i]), self->dev[i],
					  sizeof(self->dev[i])));
		strcat(devs, " ");
		strcat(devs, self->dev[i]);
	}
	ASSERT_EQ(0, run(variant->fs->mkfs, devs));
	/* A second device of btrfs is named on the mount. */
	snprintf(self->opts, sizeof(self->opts), "%s%s%s%s",
		 variant->opts ?: "",
		 variant->opts && variant->devices > 1 ? "," : "",
		 variant->devices > 1 ? "device=" : "",
		 variant->devices > 1 ? self->dev[1] : "");
	snprintf(self->mnt, sizeof(self->mnt), "/tmp/fs_test.%d", getpid());
	ASSERT_EQ(0, mkdir(self->mnt, 0755));
	ASSERT_EQ(0, fs_mount(variant->fs, self->dev[0], self->mnt,
			      self->opts));
	ASSERT_EQ(0, fs_dirty_save(&self->dirty));
	/* What mkfs and mount wrote is not what the tests look at. */
	sync();
	ASSERT_EQ(0, reset_stats(self));
}

static void fs_down(struct __test_metadata *_metadata, struct fs_env *self)
{
	int i;

	EXPECT_EQ(0, fs_dirty_restore(&self->dirty));
	if (self->mnt[0]) {
		umount(self->mnt);
		rmdir(self->mnt);
	}
	for (i = 0; i < MAX_DEVS; i++)
		if (self->dir[i][0])
			EXPECT_EQ(0, nullb_remove(self->dir[i]));
}

FIXTURE_SETUP(fs)
{
	fs_up(_metadata, &self->e, &variant->v);
}

FIXTURE_TEARDOWN(fs)
{
	fs_down(_metadata, &self->e);
}

/*
 * Check what each device received: stream ids[i] has exactly @sectors
 * (less, but some, where the data was compressed) and no stream outside
 * @ids and 0 has anything.  Logs the share of each file's bytes that
 * arrived in its stream and what stream 0 holds.  0 when all is as said.
 */
static int check_streams(struct __test_metadata *_metadata,
			 struct fs_env *self,
			 const struct fs_variant *variant, const int *ids,
			 int n, unsigned long long sectors, bool compressed)
{
	int allowed[NR_FILES + 2] = { 0 }, d, i, bad = 0;
	struct stats st;

	for (i = 0; i < n; i++)
		allowed[i + 1] = ids[i];
	allowed[n + 1] = -1;
	for (d = 0; d < variant->devices; d++) {
		if (read_stats(self->dir[d], &st))
			return -1;
		for (i = 0; i < n; i++) {
			unsigned long long got = st.sectors[ids[i]];

			TH_LOG("%s dev %d stream %d: %llu of %llu sectors (%.1f %%)",
			       variant->fs->name, d, ids[i], got, sectors,
			       100.0 * got / sectors);
			if (compressed ? !got || got >= sectors :
			    got != sectors)
				bad++;
		}
		TH_LOG("%s dev %d stream 0 (metadata, journal): %llu sectors",
		       variant->fs->name, d, st.sectors[0]);
		if (only(&st, allowed) >= 0) {
			TH_LOG("stream %d has writes", only(&st, allowed));
			bad++;
		}
	}
	return bad ? -1 : 0;
}

/* Unmount, check the file system, mount again; each file reads back. */
static int remount_and_verify(struct fs_env *self,
			      const struct fs_variant *variant,
			      const int *ids, int n)
{
	if (umount(self->mnt) || run(variant->fs->fsck, self->dev[0]) ||
	    fs_mount(variant->fs, self->dev[0], self->mnt, self->opts))
		return -1;
	return fs_check_files(self->mnt, ids, n, FILE_MIB);
}

static void concurrent_files(struct __test_metadata *_metadata,
			     struct fs_env *self,
			     const struct fs_variant *variant,
			     enum fs_flush flush)
{
	static const int ids[NR_FILES] = { 3, 4, 5, 6 };

	ASSERT_EQ(0, fs_write_files(self->mnt, ids, NR_FILES, FILE_MIB, flush));
	EXPECT_EQ(0, check_streams(_metadata, self, variant, ids, NR_FILES,
				   FILE_SECTORS, variant->compressed));
	EXPECT_EQ(0, remount_and_verify(self, variant, ids, NR_FILES));
}

TEST_F(fs, buffered_fsync)
{
	concurrent_files(_metadata, &self->e, &variant->v, FLUSH_FSYNC);
}

TEST_F(fs, buffered_sync)
{
	concurrent_files(_metadata, &self->e, &variant->v, FLUSH_SYNC);
}

TEST_F(fs, buffered_background)
{
	concurrent_files(_metadata, &self->e, &variant->v, FLUSH_BACKGROUND);
}

TEST_F(fs, direct)
{
	concurrent_files(_metadata, &self->e, &variant->v, FLUSH_DIRECT);
}

/*
 * One file opened twice, each open file with its own ID, written with
 * O_DIRECT: each half lands in the stream of the descriptor that wrote
 * it.  Where the file system turns direct writes into buffered ones,
 * both go to the inode's ID, the one set last.
 */
TEST_F(fs, direct_two_descriptors)
{
	static const int ids[] = { 8 };
	char path[300];
	int fd[2], i;

	snprintf(path, sizeof(path), "%s/f8", self->e.mnt);
	for (i = 0; i < 2; i++) {
		fd[i] = open(path, O_WRONLY | O_CREAT | O_DIRECT, 0644);
		ASSERT_LE(0, fd[i]);
		ASSERT_EQ(0, posix_fadvise(fd[i], 8 + i, 0,
					   POSIX_FADV_STREAMID));
	}
	for (i = 0; i < FILE_MIB; i++)
		ASSERT_EQ(0, write_at(fd[i * 2 / FILE_MIB], (off_t)i << 20,
				      1 << 20, 8));
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, fsync(fd[i]));
		close(fd[i]);
	}
	if (variant->v.direct_buffered) {
		EXPECT_EQ(0, check_streams(_metadata, &self->e, &variant->v,
					   (const int []){ 9 }, 1,
					   FILE_SECTORS, variant->v.compressed));
	} else {
		EXPECT_EQ(0, check_streams(_metadata, &self->e, &variant->v,
					   (const int []){ 8, 9 }, 2,
					   FILE_SECTORS / 2, false));
	}
	EXPECT_EQ(0, remount_and_verify(&self->e, &variant->v, ids, 1));
}

/*
 * A file's ID changes between writes.  Data still dirty when it changes
 * is written back with the new ID, as the documentation says; data
 * written and flushed after the change lands in the new stream.
 */
TEST_F(fs, change_id)
{
	static const int ids[] = { 7 };
	char path[300];
	int i, fd;

	snprintf(path, sizeof(path), "%s/f7", self->e.mnt);
	fd = open(path, O_WRONLY | O_CREAT, 0644);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, posix_fadvise(fd, 3, 0, POSIX_FADV_STREAMID));
	for (i = 0; i < FILE_MIB / 2; i++)
		ASSERT_EQ(0, write_at(fd, (off_t)i << 20, 1 << 20, 7));
	ASSERT_EQ(0, posix_fadvise(fd, 4, 0, POSIX_FADV_STREAMID));
	for (; i < FILE_MIB; i++)
		ASSERT_EQ(0, write_at(fd, (off_t)i << 20, 1 << 20, 7));
	ASSERT_EQ(0, fsync(fd));
	EXPECT_EQ(0, check_streams(_metadata, &self->e, &variant->v,
				   (const int []){ 4 }, 1, FILE_SECTORS,
				   variant->v.compressed));

	ASSERT_EQ(0, reset_stats(&self->e));
	ASSERT_EQ(0, posix_fadvise(fd, 5, 0, POSIX_FADV_STREAMID));
	ASSERT_EQ(0, write_at(fd, 0, 1 << 20, 7));
	ASSERT_EQ(0, fsync(fd));
	close(fd);
	EXPECT_EQ(0, check_streams(_metadata, &self->e, &variant->v,
				   (const int []){ 5 }, 1, 2048,
				   variant->v.compressed));
	EXPECT_EQ(0, remount_and_verify(&self->e, &variant->v, ids, 1));
}

/*
 * A copy of a file, shared blocks and all where the file system can
 * (xfs and btrfs reflinks), overwritten with another ID: the new data,
 * copy-on-write included, lands in the copy's stream, and the original
 * keeps its data.
 */
TEST_F(fs, copy_then_overwrite)
{
	static const int ids[] = { 3 };
	char src[300], dst[300], cmd[700];

	ASSERT_EQ(0, fs_write_files(self->e.mnt, ids, 1, FILE_MIB,
				    FLUSH_FSYNC));
	snprintf(src, sizeof(src), "%s/f3", self->e.mnt);
	snprintf(dst, sizeof(dst), "%s/copy", self->e.mnt);
	snprintf(cmd, sizeof(cmd), "cp --reflink=auto %s %s && sync", src, dst);
	ASSERT_EQ(0, system(cmd));
	ASSERT_EQ(0, reset_stats(&self->e));

	/* The first MiB of the copy, with stream 5 and its pattern. */
	ASSERT_EQ(0, fs_write_file(dst, 5, 1, 5, FLUSH_FSYNC));
	EXPECT_EQ(0, check_streams(_metadata, &self->e, &variant->v,
				   (const int []){ 5 }, 1, 2048,
				   variant->v.compressed));
	EXPECT_EQ(0, remount_and_verify(&self->e, &variant->v, ids, 1));
	EXPECT_EQ(0, check_at(dst, 0, 1 << 20, 5));
	EXPECT_EQ(0, check_at(dst, 1 << 20, 1 << 20, 3));
}

/*
 * A file of less than a block: its data goes to its stream, or, where
 * the file system keeps such data inline in its metadata (btrfs), to
 * stream 0 with the metadata.
 */
TEST_F(fs, small_file)
{
	char path[300], buf[1000], want[1000];
	struct stats st;
	int fd, d;

	snprintf(path, sizeof(path), "%s/f10", self->e.mnt);
	fd = open(path, O_WRONLY | O_CREAT, 0644);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, posix_fadvise(fd, 10, 0, POSIX_FADV_STREAMID));
	fill(buf, sizeof(buf), 0, 10);
	ASSERT_EQ(sizeof(buf), write(fd, buf, sizeof(buf)));
	ASSERT_EQ(0, fsync(fd));
	close(fd);
	for (d = 0; d < variant->v.devices; d++) {
		ASSERT_EQ(0, read_stats(self->e.dir[d], &st));
		EXPECT_EQ(variant->v.inline_small ? 0 : 8, st.sectors[10]);
		EXPECT_LT(0, st.sectors[0]);
		EXPECT_EQ(-1, only(&st, (const int []){ 0, 10, -1 }));
	}
	EXPECT_EQ(0, remount_and_verify(&self->e, &variant->v, NULL, 0));
	fd = open(path, O_RDONLY);
	ASSERT_LE(0, fd);
	memset(buf, 0, sizeof(buf));
	ASSERT_EQ(sizeof(buf), read(fd, buf, sizeof(buf)));
	close(fd);
	fill(want, sizeof(want), 0, 10);
	EXPECT_EQ(0, memcmp(buf, want, sizeof(buf)));
}

/*
 * The ID of an inode goes with it: a file made after another file with
 * a stream was deleted starts without one, even where the kernel reuses
 * the memory of the old inode for the new.  (The last close ends the ID
 * as well, so this fails only if inode set-up and that both forget it.)
 */
TEST_F(fs, new_file_has_no_stream)
{
	char path[300];
	struct stats st;
	int i, d, fd;

	for (i = 0; i < 16; i++) {
		snprintf(path, sizeof(path), "%s/old%d", self->e.mnt, i);
		ASSERT_EQ(0, fs_write_file(path, 9, 1, 9, FLUSH_FSYNC));
		ASSERT_EQ(0, unlink(path));
	}
	/* Let the deleted inodes go back to the allocator. */
	sync();
	usleep(200000);
	ASSERT_EQ(0, reset_stats(&self->e));

	for (i = 0; i < 64; i++) {
		snprintf(path, sizeof(path), "%s/new%d", self->e.mnt, i);
		fd = open(path, O_WRONLY | O_CREAT, 0644);
		ASSERT_LE(0, fd);
		ASSERT_EQ(0, write_at(fd, 0, 65536, 0));
		ASSERT_EQ(0, fsync(fd));
		close(fd);
	}
	for (d = 0; d < variant->v.devices; d++) {
		ASSERT_EQ(0, read_stats(self->e.dir[d], &st));
		/* Compressed or not, the data is all in stream 0. */
		EXPECT_LT(0, st.sectors[0]);
		EXPECT_EQ(-1, only(&st, (const int []){ 0, -1 }))
			TH_LOG("stream %d", only(&st, (const int []){ 0, -1 }));
	}
	EXPECT_EQ(0, remount_and_verify(&self->e, &variant->v, NULL, 0));
	for (i = 0; i < 64; i++) {
		snprintf(path, sizeof(path), "%s/new%d", self->e.mnt, i);
		EXPECT_EQ(0, check_at(path, 0, 65536, 0));
	}
}

/*
 * A file's ID ends once it has no writer and its data is written.  The
 * last close writes nothing: the data left dirty is written with the ID
 * later (here by sync()), and then the ID ends, so a file opened for
 * writing afterwards, with no ID of its own, writes in stream 0, whether
 * the inode stayed cached or not.  Another writer that probes for the
 * advice by clearing its own ID, or that set the same ID and clears it
 * while the first is open, does not end it.  The only writer that clears
 * the ID it set writes in stream 0.
 */
TEST_F(fs, id_ends_with_last_writer)
{
	char path[300];
	struct stats st;
	int fd, fd2, d;

	snprintf(path, sizeof(path), "%s/f8", self->e.mnt);
	fd = open(path, O_WRONLY | O_CREAT, 0644);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, posix_fadvise(fd, 8, 0, POSIX_FADV_STREAMID));
	ASSERT_EQ(0, write_at(fd, 0, 2 << 20, 8));
	fd2 = open(path, O_WRONLY);
	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, posix_fadvise(fd2, 0, 0, POSIX_FADV_STREAMID));
	ASSERT_EQ(0, posix_fadvise(fd2, 8, 0, POSIX_FADV_STREAMID));
	ASSERT_EQ(0, posix_fadvise(fd2, 0, 0, POSIX_FADV_STREAMID));
	ASSERT_EQ(0, close(fd2));
	ASSERT_EQ(0, close(fd));
	/* The closes wrote nothing of the file's 4096 sectors. */
	for (d = 0; d < variant->v.devices; d++) {
		ASSERT_EQ(0, read_stats(self->e.dir[d], &st));
		TH_LOG("dev %d after the last close: %llu sectors in 8, %llu in 0",
		       d, st.sectors[8], st.sectors[0]);
		EXPECT_EQ(0, st.sectors[8]);
		EXPECT_GT(4096, st.sectors[0]);
	}
	sync();
	EXPECT_EQ(0, check_streams(_metadata, &self->e, &variant->v,
				   (const int []){ 8 }, 1, FILE_SECTORS / 2,
				   variant->v.compressed));

	ASSERT_EQ(0, reset_stats(&self->e));
	fd = open(path, O_WRONLY);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, write_at(fd, 2 << 20, 2 << 20, 8));
	ASSERT_EQ(0, fsync(fd));
	/* The only writer clears the ID it set: its data goes to 0. */
	ASSERT_EQ(0, posix_fadvise(fd, 9, 0, POSIX_FADV_STREAMID));
	ASSERT_EQ(0, posix_fadvise(fd, 0, 0, POSIX_FADV_STREAMID));
	ASSERT_EQ(0, write_at(fd, 0, 2 << 20, 8));
	ASSERT_EQ(0, fsync(fd));
	ASSERT_EQ(0, close(fd));
	for (d = 0; d < variant->v.devices; d++) {
		ASSERT_EQ(0, read_stats(self->e.dir[d], &st));
		EXPECT_LT(0, st.sectors[0]);
		EXPECT_EQ(-1, only(&st, (const int []){ 0, -1 }))
			TH_LOG("stream %d", only(&st, (const int []){ 0, -1 }));
	}
	EXPECT_EQ(0, remount_and_verify(&self->e, &variant->v,
					(const int []){ 8 }, 1));
}

/*
 * The ID also ends at the last close when the file's data is written
 * already, and at a truncate by path that drops the data still dirty: a
 * writer that opens the file next, with no ID of its own, writes in 0.
 */
TEST_F(fs, id_ends_at_close_or_truncate)
{
	char path[300];
	struct stats st;
	int fd, d, round;

	snprintf(path, sizeof(path), "%s/f11", self->e.mnt);
	for (round = 0; round < 2; round++) {
		fd = open(path, O_WRONLY | O_CREAT, 0644);
		ASSERT_LE(0, fd);
		ASSERT_EQ(0, posix_fadvise(fd, 11, 0, POSIX_FADV_STREAMID));
		ASSERT_EQ(0, write_at(fd, 0, 1 << 20, 11));
		if (!round)
			ASSERT_EQ(0, fsync(fd));
		ASSERT_EQ(0, close(fd));
		if (round)
			ASSERT_EQ(0, truncate(path, 0));
		ASSERT_EQ(0, reset_stats(&self->e));

		ASSERT_EQ(0, write_untagged(path, 1 << 20, 0));
		for (d = 0; d < variant->v.devices; d++) {
			ASSERT_EQ(0, read_stats(self->e.dir[d], &st));
			EXPECT_LT(0, st.sectors[0]);
			EXPECT_EQ(-1, only(&st, (const int []){ 0, -1 }))
				TH_LOG("round %d: stream %d", round,
				       only(&st, (const int []){ 0, -1 }));
		}
	}
}

/*
 * The data of a file unlinked before its last close dies with it: the
 * close that ends the ID does not write it back first.
 */
TEST_F(fs, unlinked_file_not_written)
{
	char path[300];
	struct stats st;
	int fd, d;

	snprintf(path, sizeof(path), "%s/scratch", self->e.mnt);
	fd = open(path, O_WRONLY | O_CREAT, 0644);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, posix_fadvise(fd, 9, 0, POSIX_FADV_STREAMID));
	ASSERT_EQ(0, write_at(fd, 0, 2 << 20, 9));
	ASSERT_EQ(0, unlink(path));
	ASSERT_EQ(0, close(fd));
	sync();
	for (d = 0; d < variant->v.devices; d++) {
		ASSERT_EQ(0, read_stats(self->e.dir[d], &st));
		TH_LOG("dev %d: %llu sectors in stream 9, %llu in 0", d,
		       st.sectors[9], st.sectors[0]);
		EXPECT_EQ(-1, only(&st, (const int []){ 0, -1 }));
		/* Metadata, but not the 4096 sectors of data. */
		EXPECT_GT(4096, st.sectors[0]);
	}
}

/*
 * Writers that open one file, set their own ID, write their own MiB
 * buffered and close, over and over, at the same time: last closes race
 * with opens and with the advice of others.  No write fails, every MiB
 * reads back, and the device saw only their streams and 0.
 */
TEST_F(fs, writers_open_and_close)
{
	char path[300];
	struct stats st;
	int i, d, status, fd;
	pid_t pid;

	snprintf(path, sizeof(path), "%s/shared", self->e.mnt);
	fd = open(path, O_WRONLY | O_CREAT, 0644);
	ASSERT_LE(0, fd);
	close(fd);
	for (i = 0; i < NR_FILES; i++) {
		pid = fork();
		ASSERT_LE(0, pid);
		if (!pid) {
			int n, ret = 0;

			for (n = 0; n < 32 && !ret; n++) {
				fd = open(path, O_WRONLY);
				if (fd < 0 ||
				    posix_fadvise(fd, 3 + i, 0, POSIX_FADV_STREAMID) ||
				    write_at(fd, (off_t)i << 20, 1 << 20, 3 + i))
					ret = 1;
				if (fd >= 0 && close(fd))
					ret = 1;
			}
			_exit(ret);
		}
	}
	for (i = 0; i < NR_FILES; i++) {
		ASSERT_LT(0, wait(&status));
		EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	}
	sync();
	for (d = 0; d < variant->v.devices; d++) {
		unsigned long long tagged = 0;

		ASSERT_EQ(0, read_stats(self->e.dir[d], &st));
		EXPECT_EQ(-1, only(&st, (const int []){ 0, 3, 4, 5, 6, -1 }));
		/*
		 * Every MiB was last dirtied under one of their IDs and
		 * written back under one: at least all of it is tagged.
		 */
		for (i = 0; i < NR_FILES; i++)
			tagged += st.sectors[3 + i];
		TH_LOG("dev %d: %llu sectors in streams 3-6, %llu in 0", d,
		       tagged, st.sectors[0]);
		EXPECT_LE(variant->v.compressed ? 1 : NR_FILES * 2048ULL,
			  tagged);
	}
	/* The last of them closed: a writer without an ID writes in 0. */
	ASSERT_EQ(0, reset_stats(&self->e));
	ASSERT_EQ(0, write_untagged(path, (off_t)NR_FILES << 20, 0));
	for (d = 0; d < variant->v.devices; d++) {
		ASSERT_EQ(0, read_stats(self->e.dir[d], &st));
		EXPECT_EQ(-1, only(&st, (const int []){ 0, -1 }));
	}
	for (i = 0; i < NR_FILES; i++)
		EXPECT_EQ(0, check_at(path, (off_t)i << 20, 1 << 20, 3 + i));
	EXPECT_EQ(0, remount_and_verify(&self->e, &variant->v, NULL, 0));
}

/*
 * btrfs balance moves a file's data by writing it back through the data
 * relocation inode, which has no ID: moved data goes to stream 0, as
 * documented, and reads back.
 */
FIXTURE(balance) {
	struct fs_env e;
};

static const struct fs_variant btrfs_single = {
	.fs = &fs_btrfs, .devices = 1,
};

FIXTURE_SETUP(balance)
{
	fs_up(_metadata, &self->e, &btrfs_single);
}

FIXTURE_TEARDOWN(balance)
{
	fs_down(_metadata, &self->e);
}

TEST_F(balance, moved_data_has_no_stream)
{
	static const int ids[] = { 3 };
	struct stats st;

	ASSERT_EQ(0, fs_write_files(self->e.mnt, ids, 1, FILE_MIB,
				    FLUSH_FSYNC));
	ASSERT_EQ(0, read_stats(self->e.dir[0], &st));
	ASSERT_EQ(FILE_SECTORS, st.sectors[3]);
	ASSERT_EQ(0, reset_stats(&self->e));
	ASSERT_EQ(0, run("btrfs balance start --full-balance -d %s",
			 self->e.mnt));
	sync();
	ASSERT_EQ(0, read_stats(self->e.dir[0], &st));
	TH_LOG("balance: %llu sectors in stream 0", st.sectors[0]);
	EXPECT_LE(FILE_SECTORS, st.sectors[0]);
	EXPECT_EQ(-1, only(&st, (const int []){ 0, -1 }));
	EXPECT_EQ(0, remount_and_verify(&self->e, &btrfs_single, ids, 1));
}

/*
 * overlayfs over ext4: the writes of an overlay file are issued by the
 * file underneath, in the upper directory, which gets the ID from the
 * overlay file; the overlay file shows it in fdinfo.
 */
FIXTURE(overlay) {
	struct fs_env e;
	char merged[100];
};

static const struct fs_variant ext4_single = {
	.fs = &fs_ext4, .devices = 1,
};

FIXTURE_SETUP(overlay)
{
	char opts[1024];

	fs_up(_metadata, &self->e, &ext4_single);
	ASSERT_EQ(0, run("mkdir %1$s/lower %1$s/upper %1$s/work %1$s/merged",
			 self->e.mnt));
	snprintf(self->merged, sizeof(self->merged), "%s/merged", self->e.mnt);
	snprintf(opts, sizeof(opts),
		 "lowerdir=%1$s/lower,upperdir=%1$s/upper,workdir=%1$s/work",
		 self->e.mnt);
	ASSERT_EQ(0, mount("overlay", self->merged, "overlay", 0, opts));
	sync();
	ASSERT_EQ(0, reset_stats(&self->e));
}

FIXTURE_TEARDOWN(overlay)
{
	if (self->merged[0])
		umount(self->merged);
	fs_down(_metadata, &self->e);
}

/* Files written through the overlay, buffered: each in its stream. */
TEST_F(overlay, buffered)
{
	static const int ids[] = { 3, 4 };

	ASSERT_EQ(0, fs_write_files(self->merged, ids, 2, FILE_MIB,
				    FLUSH_FSYNC));
	EXPECT_EQ(0, check_streams(_metadata, &self->e, &ext4_single, ids, 2,
				   FILE_SECTORS, false));
	EXPECT_EQ(0, fs_check_files(self->merged, ids, 2, FILE_MIB));
}

/* The same with O_DIRECT, which the file underneath issues too. */
TEST_F(overlay, direct)
{
	static const int ids[] = { 5, 6 };

	ASSERT_EQ(0, fs_write_files(self->merged, ids, 2, FILE_MIB,
				    FLUSH_DIRECT));
	EXPECT_EQ(0, check_streams(_metadata, &self->e, &ext4_single, ids, 2,
				   FILE_SECTORS, false));
	EXPECT_EQ(0, fs_check_files(self->merged, ids, 2, FILE_MIB));
}

/*
 * A file of the lower directory, copied up when it is opened for
 * writing: the copy goes without a stream, the writes after the advice
 * to its stream, and fdinfo shows the ID on the overlay file.
 */
TEST_F(overlay, copy_up)
{
	char lower[300], path[300];
	struct stats st;
	int fd;

	snprintf(lower, sizeof(lower), "%s/lower/f7", self->e.mnt);
	ASSERT_EQ(0, fs_write_file(lower, 0, FILE_MIB, 7, FLUSH_FSYNC));
	ASSERT_EQ(0, reset_stats(&self->e));

	snprintf(path, sizeof(path), "%s/f7", self->merged);
	fd = open(path, O_WRONLY);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, posix_fadvise(fd, 7, 0, POSIX_FADV_STREAMID));
	EXPECT_EQ(7, fdinfo_streamid(fd));
	ASSERT_EQ(0, write_at(fd, 0, 1 << 20, 7));
	ASSERT_EQ(0, fsync(fd));
	ASSERT_EQ(0, close(fd));
	ASSERT_EQ(0, read_stats(self->e.dir[0], &st));
	TH_LOG("copy-up: %llu sectors in stream 0, %llu in stream 7",
	       st.sectors[0], st.sectors[7]);
	EXPECT_EQ(2048, st.sectors[7]);
	EXPECT_EQ(-1, only(&st, (const int []){ 0, 7, -1 }));
	EXPECT_EQ(0, fs_check_files(self->merged, (const int []){ 7 }, 1,
				    FILE_MIB));
}

/*
 * F_SETFL on the overlay file changes the flags of the file underneath
 * (here O_DIRECT), which keeps the ID; and the last close of the overlay
 * file, which closes the file underneath, ends the ID of its inode.
 */
TEST_F(overlay, setfl_then_close)
{
	char path[300];
	struct stats st;
	int fd;

	snprintf(path, sizeof(path), "%s/f6", self->merged);
	fd = open(path, O_WRONLY | O_CREAT, 0644);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, posix_fadvise(fd, 6, 0, POSIX_FADV_STREAMID));
	ASSERT_EQ(0, fcntl(fd, F_SETFL, O_DIRECT));
	EXPECT_EQ(6, fdinfo_streamid(fd));
	ASSERT_EQ(0, write_at(fd, 0, 1 << 20, 6));
	ASSERT_EQ(0, fsync(fd));
	ASSERT_EQ(0, close(fd));
	ASSERT_EQ(0, read_stats(self->e.dir[0], &st));
	EXPECT_EQ(2048, st.sectors[6]);
	EXPECT_EQ(-1, only(&st, (const int []){ 0, 6, -1 }));

	ASSERT_EQ(0, reset_stats(&self->e));
	ASSERT_EQ(0, write_untagged(path, 1 << 20, 6));
	ASSERT_EQ(0, read_stats(self->e.dir[0], &st));
	EXPECT_LE(2048, st.sectors[0]);
	EXPECT_EQ(-1, only(&st, (const int []){ 0, -1 }));
	EXPECT_EQ(0, check_at(path, 0, 2 << 20, 6));
}

TEST_HARNESS_MAIN
