// SPDX-License-Identifier: GPL-2.0
/*
 * Stream IDs from fadvise to the device, on a null_blk device with
 * streams: what the device counted per stream in its stream_stats must be
 * exactly what was written with each ID, for direct and buffered writes
 * to the raw block device (write(), aio and io_uring), through merges and
 * splits, and on partitions; the data reads back.
 */
#define _GNU_SOURCE
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/aio_abi.h>
#include <linux/io_uring.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "streamid.h"
#include "uring.h"

#define STREAMS 8

FIXTURE(nullb) {
	char dir[256];
	char dev[128];
};

/*
 * A 256 MiB memory-backed null_blk device with STREAMS streams and
 * requests of at most 32 KiB, so that large writes split.
 */
FIXTURE_SETUP(nullb)
{
	char name[64];

	if (access(NULLB, F_OK))
		SKIP(return, "no null_blk configfs");
	snprintf(name, sizeof(name), "streamid%d", getpid());
	ASSERT_EQ(0, nullb_create(name, 256, STREAMS, 64, self->dir,
				  sizeof(self->dir), self->dev,
				  sizeof(self->dev)));
}

FIXTURE_TEARDOWN(nullb)
{
	if (self->dir[0])
		EXPECT_EQ(0, nullb_remove(self->dir));
}

TEST_F(nullb, max_write_streams)
{
	char path[512], buf[64];

	snprintf(path, sizeof(path), "/sys/block/%s/queue/max_write_streams",
		 self->dev + strlen("/dev/"));
	ASSERT_LT(0, read_file(path, buf, sizeof(buf)));
	EXPECT_STREQ("8", buf);
}

/*
 * O_DIRECT from four open files at once, three with a stream and one
 * without: each stream counts exactly the sectors written with its ID,
 * the untagged ones count under 0.
 */
TEST_F(nullb, direct_several_fds)
{
	static const struct { int id; size_t len; int n; } w[] = {
		{ 1, 65536, 4 }, { 2, 131072, 2 }, { 3, 4096, 10 },
		{ 0, 8192, 3 },
	};
	static const int ids[] = { 0, 1, 2, 3, -1 };
	struct stats st;
	int fd[4], i, k;
	off_t off = 0;

	for (i = 0; i < 4; i++) {
		fd[i] = open_stream(self->dev, O_WRONLY | O_DIRECT, w[i].id);
		ASSERT_LE(0, fd[i]);
	}
	/* Interleave the files' writes. */
	for (k = 0; k < 10; k++)
		for (i = 0; i < 4; i++)
			if (k < w[i].n) {
				ASSERT_EQ(0, write_at(fd[i], off, w[i].len,
						      w[i].id));
				off += w[i].len;
			}
	for (i = 0; i < 4; i++)
		close(fd[i]);

	ASSERT_EQ(0, read_stats(self->dir, &st));
	for (i = 0; i < 4; i++)
		EXPECT_EQ(w[i].len * w[i].n / 512, st.sectors[w[i].id])
			TH_LOG("stream %d", w[i].id);
	EXPECT_EQ(-1, only(&st, ids));

	off = 0;
	for (k = 0; k < 10; k++)
		for (i = 0; i < 4; i++)
			if (k < w[i].n) {
				EXPECT_EQ(0, check_at(self->dev, off, w[i].len,
						      w[i].id));
				off += w[i].len;
			}
}

/* Buffered writes to the device node reach it with the ID, at fsync. */
TEST_F(nullb, buffered)
{
	static const int ids[] = { 5, -1 };
	struct stats st;
	int fd;

	fd = open_stream(self->dev, O_WRONLY, 5);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, write_at(fd, 64 << 20, 1 << 20, 5));
	ASSERT_EQ(0, fsync(fd));
	close(fd);

	ASSERT_EQ(0, read_stats(self->dir, &st));
	EXPECT_EQ(2048, st.sectors[5]);
	EXPECT_EQ(-1, only(&st, ids)) TH_LOG("stream %d", only(&st, ids));
	EXPECT_EQ(0, check_at(self->dev, 64 << 20, 1 << 20, 5));
}

/* One write larger than a request can be keeps its ID on every piece. */
TEST_F(nullb, split)
{
	static const int ids[] = { 7, -1 };
	struct stats st;
	int fd;

	fd = open_stream(self->dev, O_WRONLY | O_DIRECT, 7);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, write_at(fd, 1 << 20, 1 << 20, 7));
	close(fd);

	ASSERT_EQ(0, read_stats(self->dir, &st));
	EXPECT_EQ(2048, st.sectors[7]);
	/* max_sectors is 64: 32 pieces at least. */
	EXPECT_LE(32, st.requests[7]);
	EXPECT_EQ(-1, only(&st, ids));
	EXPECT_EQ(0, check_at(self->dev, 1 << 20, 1 << 20, 7));
}

static long io_setup(unsigned int nr, aio_context_t *ctx)
{
	return syscall(__NR_io_setup, nr, ctx);
}

static long io_submit(aio_context_t ctx, long n, struct iocb **iocbs)
{
	return syscall(__NR_io_submit, ctx, n, iocbs);
}

static long io_getevents(aio_context_t ctx, long min, long max,
			 struct io_event *events)
{
	return syscall(__NR_io_getevents, ctx, min, max, events, NULL);
}

static long io_destroy(aio_context_t ctx)
{
	return syscall(__NR_io_destroy, ctx);
}

#define BATCH 8

/*
 * Submit BATCH adjacent 4 KiB O_DIRECT writes from offset 0 in one
 * io_submit(), so that the plug can merge them: the i-th through @fds[i],
 * with the pattern of @ids[i].  Waits for them all.
 */
static void write_batch(struct __test_metadata *_metadata, const int *fds,
			const int *ids)
{
	struct iocb cb[BATCH], *cbs[BATCH];
	struct io_event ev[BATCH];
	aio_context_t ctx = 0;
	void *buf[BATCH];
	int i, got = 0;

	ASSERT_EQ(0, io_setup(BATCH, &ctx));
	memset(cb, 0, sizeof(cb));
	for (i = 0; i < BATCH; i++) {
		ASSERT_EQ(0, posix_memalign(&buf[i], 4096, 4096));
		fill(buf[i], 4096, i * 4096, ids[i]);
		cb[i].aio_fildes = fds[i];
		cb[i].aio_lio_opcode = IOCB_CMD_PWRITE;
		cb[i].aio_buf = (unsigned long)buf[i];
		cb[i].aio_nbytes = 4096;
		cb[i].aio_offset = i * 4096;
		cbs[i] = &cb[i];
	}
	ASSERT_EQ(BATCH, io_submit(ctx, BATCH, cbs));
	while (got < BATCH) {
		long n = io_getevents(ctx, 1, BATCH - got, ev);

		ASSERT_LT(0, n);
		for (i = 0; i < n; i++)
			EXPECT_EQ(4096, ev[i].res);
		got += n;
	}
	io_destroy(ctx);
	for (i = 0; i < BATCH; i++)
		free(buf[i]);
}

/*
 * Eight adjacent 4 KiB writes submitted together, so that the plug merges
 * them: four from a file with stream 1, then four from one with stream 2.
 * The writes of each stream merge, but no request mixes the two.
 */
TEST_F(nullb, merges)
{
	static const int ids[] = { 1, 2, -1 };
	static const int pattern[BATCH] = { 1, 1, 1, 1, 2, 2, 2, 2 };
	struct stats st;
	int fd[2], fds[BATCH], i;

	fd[0] = open_stream(self->dev, O_WRONLY | O_DIRECT, 1);
	fd[1] = open_stream(self->dev, O_WRONLY | O_DIRECT, 2);
	ASSERT_LE(0, fd[0]);
	ASSERT_LE(0, fd[1]);
	for (i = 0; i < BATCH; i++)
		fds[i] = fd[i / 4];
	write_batch(_metadata, fds, pattern);
	close(fd[0]);
	close(fd[1]);

	ASSERT_EQ(0, read_stats(self->dir, &st));
	EXPECT_EQ(32, st.sectors[1]);
	EXPECT_EQ(32, st.sectors[2]);
	EXPECT_EQ(-1, only(&st, ids));
	/* Adjacent writes of one stream still merge. */
	EXPECT_GT(4, st.requests[1]);
	EXPECT_GT(4, st.requests[2]);
	TH_LOG("requests: stream 1 %llu, stream 2 %llu", st.requests[1],
	       st.requests[2]);
	for (i = 0; i < BATCH; i++)
		EXPECT_EQ(0, check_at(self->dev, i * 4096, 4096, pattern[i]));
}

/*
 * A device without streams gets the writes of two files with different
 * IDs, alternating, exactly as it gets them without IDs: merged into as
 * few requests (counted by the disk), none of them in a stream.
 */
TEST(no_streams_same_requests)
{
	static const int pattern[BATCH] = { 1, 2, 1, 2, 1, 2, 1, 2 };
	unsigned long long before, requests[2];
	char dir[256], dev[128], name[64];
	int fd[2], fds[BATCH], i, tagged;

	if (access(NULLB, F_OK))
		SKIP(return, "no null_blk configfs");
	snprintf(name, sizeof(name), "streamid_none%d", getpid());
	ASSERT_EQ(0, nullb_create(name, 16, 0, 0, dir, sizeof(dir), dev,
				  sizeof(dev)));
	for (tagged = 0; tagged < 2; tagged++) {
		for (i = 0; i < 2; i++) {
			fd[i] = open_stream(dev, O_WRONLY | O_DIRECT,
					    tagged ? 1 + i : 0);
			ASSERT_LE(0, fd[i]);
		}
		for (i = 0; i < BATCH; i++)
			fds[i] = fd[i % 2];
		before = disk_stat(name, 4);
		write_batch(_metadata, fds, pattern);
		requests[tagged] = disk_stat(name, 4) - before;
		close(fd[0]);
		close(fd[1]);
		for (i = 0; i < BATCH; i++)
			EXPECT_EQ(0, check_at(dev, i * 4096, 4096, pattern[i]));
	}
	TH_LOG("write requests for %d writes: %llu without IDs, %llu with",
	       BATCH, requests[0], requests[1]);
	EXPECT_GT(BATCH, requests[0]);
	EXPECT_EQ(requests[0], requests[1]);
	EXPECT_EQ(0, nullb_remove(dir));
}

/*
 * Two files of one device with different IDs: direct writes use each
 * file's ID; buffered writes, written back from the device's inode, use
 * the ID last set on any of its files.
 */
TEST_F(nullb, two_fds)
{
	static const int ids[] = { 3, 4, -1 };
	struct stats st;
	int a, b, c;

	a = open_stream(self->dev, O_WRONLY | O_DIRECT, 3);
	b = open_stream(self->dev, O_WRONLY | O_DIRECT, 4);
	c = open_stream(self->dev, O_WRONLY, 0);
	ASSERT_LE(0, a);
	ASSERT_LE(0, b);
	ASSERT_LE(0, c);
	ASSERT_EQ(0, write_at(a, 0, 65536, 3));
	ASSERT_EQ(0, write_at(b, 65536, 65536, 4));
	ASSERT_EQ(0, write_at(c, 131072, 65536, 4));
	ASSERT_EQ(0, fsync(c));
	close(a);
	close(b);
	close(c);

	ASSERT_EQ(0, read_stats(self->dir, &st));
	EXPECT_EQ(128, st.sectors[3]);
	EXPECT_EQ(256, st.sectors[4]);
	EXPECT_EQ(-1, only(&st, ids));
	EXPECT_EQ(0, check_at(self->dev, 0, 65536, 3));
	EXPECT_EQ(0, check_at(self->dev, 65536, 131072, 4));
}

/*
 * The ID of the device ends at its last close.  Data written with it
 * before is written with it: the last close syncs, and an fsync through
 * another file before that uses it.  A file system made on the device
 * after the last close (mkfs and the file system's metadata go through
 * the device's page cache) has nothing in the old streams.
 */
TEST_F(nullb, id_ends_at_last_close)
{
	char cmd[1024], mnt[64];
	struct stats st;
	int fd, keep;

	/* The last close syncs, with the ID. */
	fd = open_stream(self->dev, O_WRONLY, 6);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, write_at(fd, 0, 1 << 20, 6));
	ASSERT_EQ(0, close(fd));
	ASSERT_EQ(0, read_stats(self->dir, &st));
	EXPECT_EQ(2048, st.sectors[6]);
	EXPECT_EQ(-1, only(&st, (const int []){ 6, -1 }));

	/* While another opener holds the device, the ID stays. */
	keep = open(self->dev, O_RDONLY);
	ASSERT_LE(0, keep);
	fd = open_stream(self->dev, O_WRONLY, 7);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, write_at(fd, 1 << 20, 1 << 20, 7));
	ASSERT_EQ(0, close(fd));
	ASSERT_EQ(0, write_attr(self->dir, "stream_stats", "0"));
	fd = open(self->dev, O_WRONLY);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fsync(fd));
	ASSERT_EQ(0, close(fd));
	ASSERT_EQ(0, read_stats(self->dir, &st));
	EXPECT_EQ(2048, st.sectors[7]);
	EXPECT_EQ(-1, only(&st, (const int []){ 7, -1 }));
	ASSERT_EQ(0, close(keep));

	ASSERT_EQ(0, write_attr(self->dir, "stream_stats", "0"));
	snprintf(mnt, sizeof(mnt), "/tmp/blockdev_test.%d", getpid());
	ASSERT_EQ(0, mkdir(mnt, 0755));
	snprintf(cmd, sizeof(cmd),
		 "mkfs.ext4 -q -F %1$s && mount %1$s %2$s && dd if=/dev/zero of=%2$s/f bs=1M count=4 conv=fsync status=none && umount %2$s",
		 self->dev, mnt);
	EXPECT_EQ(0, system(cmd));
	rmdir(mnt);
	ASSERT_EQ(0, read_stats(self->dir, &st));
	EXPECT_LT(8192, st.sectors[0]);
	EXPECT_EQ(-1, only(&st, (const int []){ 0, -1 }))
		TH_LOG("stream %d", only(&st, (const int []){ 0, -1 }));
}

/*
 * A device that is held takes an ID from its holder only.  With an ID set
 * on an open file of the device, mkfs (which opens it O_EXCL) and mount
 * claim the device, which ends the ID: what mkfs and the file system
 * write through the device's page cache is in stream 0.  fadvise on the
 * mounted device fails with EBUSY and changes nothing, but clearing an
 * ID works; after the unmount it works again.  An O_EXCL opener may set
 * one, and others may not.
 */
TEST_F(nullb, held_device)
{
	char cmd[1024], mnt[64];
	struct stats st;
	int fd, other, excl;

	fd = open_stream(self->dev, O_WRONLY, 5);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, write_at(fd, 0, 1 << 20, 5));
	ASSERT_EQ(0, fsync(fd));
	ASSERT_EQ(0, read_stats(self->dir, &st));
	EXPECT_EQ(2048, st.sectors[5]);
	ASSERT_EQ(0, write_attr(self->dir, "stream_stats", "0"));

	snprintf(mnt, sizeof(mnt), "/tmp/blockdev_test.%d", getpid());
	ASSERT_EQ(0, mkdir(mnt, 0755));
	snprintf(cmd, sizeof(cmd),
		 "mkfs.ext4 -q -F %1$s && mount %1$s %2$s && dd if=/dev/zero of=%2$s/f bs=1M count=4 conv=fsync status=none && sync",
		 self->dev, mnt);
	ASSERT_EQ(0, system(cmd));
	ASSERT_EQ(0, read_stats(self->dir, &st));
	EXPECT_LT(8192, st.sectors[0]);
	EXPECT_EQ(-1, only(&st, (const int []){ 0, -1 }))
		TH_LOG("stream %d", only(&st, (const int []){ 0, -1 }));

	EXPECT_EQ(EBUSY, posix_fadvise(fd, 6, 0, POSIX_FADV_STREAMID));
	EXPECT_EQ(5, fdinfo_streamid(fd));
	/* Clearing its own ID is never refused. */
	EXPECT_EQ(0, posix_fadvise(fd, 0, 0, POSIX_FADV_STREAMID));
	EXPECT_EQ(0, fdinfo_streamid(fd));
	other = open(self->dev, O_WRONLY);
	ASSERT_LE(0, other);
	EXPECT_EQ(EBUSY, posix_fadvise(other, 6, 0, POSIX_FADV_STREAMID));
	EXPECT_EQ(0, fdinfo_streamid(other));
	EXPECT_EQ(0, umount(mnt));
	rmdir(mnt);
	EXPECT_EQ(0, posix_fadvise(other, 6, 0, POSIX_FADV_STREAMID));
	ASSERT_EQ(0, close(other));

	excl = open(self->dev, O_WRONLY | O_EXCL);
	ASSERT_LE(0, excl);
	EXPECT_EQ(0, posix_fadvise(excl, 7, 0, POSIX_FADV_STREAMID));
	EXPECT_EQ(EBUSY, posix_fadvise(fd, 8, 0, POSIX_FADV_STREAMID));
	ASSERT_EQ(0, write_attr(self->dir, "stream_stats", "0"));
	ASSERT_EQ(0, write_at(excl, 64 << 20, 1 << 20, 7));
	ASSERT_EQ(0, fsync(excl));
	ASSERT_EQ(0, read_stats(self->dir, &st));
	EXPECT_EQ(2048, st.sectors[7]);
	EXPECT_EQ(-1, only(&st, (const int []){ 7, -1 }));
	ASSERT_EQ(0, close(excl));
	ASSERT_EQ(0, close(fd));
}

/*
 * Writes submitted with io_uring carry the ID of their file as write()
 * does: O_DIRECT ones (block/fops.c's asynchronous path) from the kiocb,
 * buffered ones at writeback.
 */
TEST_F(nullb, io_uring)
{
	struct stats st;
	int fd;

	fd = open_stream(self->dev, O_WRONLY | O_DIRECT, 3);
	ASSERT_LE(0, fd);
	ASSERT_EQ(1 << 20, uring_write(fd, 0, 1 << 20, 3, 0));
	ASSERT_EQ(0, close(fd));
	fd = open_stream(self->dev, O_WRONLY, 4);
	ASSERT_LE(0, fd);
	ASSERT_EQ(1 << 20, uring_write(fd, 1 << 20, 1 << 20, 4, 0));
	ASSERT_EQ(0, fsync(fd));
	ASSERT_EQ(0, close(fd));

	ASSERT_EQ(0, read_stats(self->dir, &st));
	EXPECT_EQ(2048, st.sectors[3]);
	EXPECT_EQ(2048, st.sectors[4]);
	EXPECT_EQ(-1, only(&st, (const int []){ 3, 4, -1 }));
	EXPECT_EQ(0, check_at(self->dev, 0, 1 << 20, 3));
	EXPECT_EQ(0, check_at(self->dev, 1 << 20, 1 << 20, 4));
}

/*
 * The holder rule across partitions, which share the disk with the whole
 * disk: while a partition is held (O_EXCL, as mount and mkfs open it),
 * the whole disk takes no ID and its writes go in no stream, but the
 * other partition takes one; while the whole disk is held, no partition
 * takes one.  Once let go, the whole disk takes an ID again.
 */
TEST_F(nullb, partitions_held)
{
	char p1[140], p2[140];
	int whole, part1, part2, excl;
	struct stats st;

	whole = open(self->dev, O_WRONLY);
	ASSERT_LE(0, whole);
	ASSERT_EQ(0, make_partitions(whole));
	snprintf(p1, sizeof(p1), "%sp1", self->dev);
	snprintf(p2, sizeof(p2), "%sp2", self->dev);

	excl = open(p1, O_WRONLY | O_EXCL);
	ASSERT_LE(0, excl);
	EXPECT_EQ(EBUSY, posix_fadvise(whole, 3, 0, POSIX_FADV_STREAMID));
	EXPECT_EQ(0, fdinfo_streamid(whole));
	part2 = open(p2, O_WRONLY);
	ASSERT_LE(0, part2);
	EXPECT_EQ(0, posix_fadvise(part2, 4, 0, POSIX_FADV_STREAMID));
	ASSERT_EQ(0, write_attr(self->dir, "stream_stats", "0"));
	ASSERT_EQ(0, write_at(whole, 128 << 20, 1 << 20, 3));
	ASSERT_EQ(0, fsync(whole));
	ASSERT_EQ(0, write_at(part2, 0, 1 << 20, 4));
	ASSERT_EQ(0, fsync(part2));
	ASSERT_EQ(0, read_stats(self->dir, &st));
	EXPECT_EQ(2048, st.sectors[0]);
	EXPECT_EQ(2048, st.sectors[4]);
	EXPECT_EQ(-1, only(&st, (const int []){ 0, 4, -1 }));
	ASSERT_EQ(0, close(excl));
	EXPECT_EQ(0, posix_fadvise(whole, 3, 0, POSIX_FADV_STREAMID));
	EXPECT_EQ(0, posix_fadvise(whole, 0, 0, POSIX_FADV_STREAMID));

	excl = open(self->dev, O_WRONLY | O_EXCL);
	ASSERT_LE(0, excl);
	part1 = open(p1, O_WRONLY);
	ASSERT_LE(0, part1);
	EXPECT_EQ(EBUSY, posix_fadvise(part1, 5, 0, POSIX_FADV_STREAMID));
	EXPECT_EQ(0, fdinfo_streamid(part1));
	EXPECT_EQ(EBUSY, posix_fadvise(part2, 5, 0, POSIX_FADV_STREAMID));
	EXPECT_EQ(4, fdinfo_streamid(part2));
	ASSERT_EQ(0, close(part1));
	ASSERT_EQ(0, close(part2));
	ASSERT_EQ(0, close(excl));
	ASSERT_EQ(0, close(whole));
}

/* Writing to stream_stats resets it; 256 streams are refused. */
TEST_F(nullb, stats_reset_and_bounds)
{
	char dir[300], path[300], buf[64];
	struct stats st;
	ssize_t n;
	int fd;

	fd = open_stream(self->dev, O_WRONLY | O_DIRECT, 2);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, write_at(fd, 0, 4096, 2));
	close(fd);
	ASSERT_EQ(0, read_stats(self->dir, &st));
	EXPECT_EQ(8, st.sectors[2]);
	/* The file is text: exactly its lines, each ended by a newline. */
	snprintf(path, sizeof(path), "%s/stream_stats", self->dir);
	fd = open(path, O_RDONLY);
	ASSERT_LE(0, fd);
	n = read(fd, buf, sizeof(buf));
	close(fd);
	ASSERT_EQ(6, n);
	EXPECT_EQ(0, memcmp(buf, "2 1 8\n", 6));
	ASSERT_EQ(0, write_attr(self->dir, "stream_stats", "0"));
	ASSERT_EQ(0, read_stats(self->dir, &st));
	EXPECT_EQ(-1, only(&st, (const int []){ -1 }));

	snprintf(dir, sizeof(dir), "%s.bounds", self->dir);
	ASSERT_EQ(0, mkdir(dir, 0755));
	EXPECT_EQ(0, write_attr(dir, "streams", "256"));
	EXPECT_NE(0, write_attr(dir, "power", "1"));
	EXPECT_EQ(0, write_attr(dir, "streams", "255"));
	EXPECT_EQ(0, write_attr(dir, "power", "1"));
	write_attr(dir, "power", "0");
	EXPECT_EQ(0, rmdir(dir));
}

TEST_HARNESS_MAIN
