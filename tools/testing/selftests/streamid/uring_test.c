// SPDX-License-Identifier: GPL-2.0
/*
 * The write stream of one write (io_uring's sqe->write_stream, as in
 * Linux 6.16) and mainline's rules for raw block devices, on null_blk
 * devices with streams: what each stream counted in stream_stats must be
 * exactly what was written in it.  Streams 1 to max_write_streams reach
 * the device, higher ones fail with EINVAL and nothing is written; the
 * stream of the write comes before the ID of its file; buffered writes
 * and reads ignore it; partitions have no streams to choose; a lifetime
 * hint is the stream of its number for direct writes to the node.  The
 * sysfs limits say what the device has.  Direct writes to files on
 * ext4, xfs and btrfs carry the stream of the write too.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sys/uio.h>

#include "../kselftest_harness.h"
#include "fs.h"
#include "uring.h"

#ifndef F_SET_RW_HINT
#define F_SET_RW_HINT	(1024 + 12)
#endif

#define STREAMS		8
#define GRANULARITY	"1048576"
#define LEN		65536
#define LEN_SECTORS	(LEN / 512)

/*
 * A null_blk device @name of @mib MiB, memory-backed, with @streams write
 * streams and a stream granularity of @gran bytes.
 */
static int nullb_make(const char *name, int mib, int streams,
		      const char *gran, char *dir, size_t dirlen, char *dev,
		      size_t devlen)
{
	if (nullb_new(name, mib, streams, dir, dirlen) ||
	    write_attr(dir, "stream_granularity", gran))
		return -1;
	return nullb_power_on(dir, dev, devlen);
}

FIXTURE(raw) {
	char dir[256];
	char dev[128];
	struct ring r;
};

FIXTURE_SETUP(raw)
{
	char name[64];

	if (access(NULLB, F_OK))
		SKIP(return, "no null_blk configfs");
	snprintf(name, sizeof(name), "uring%d", getpid());
	ASSERT_EQ(0, nullb_make(name, 256, STREAMS, GRANULARITY, self->dir,
				sizeof(self->dir), self->dev,
				sizeof(self->dev)));
	if (ring_init(&self->r))
		SKIP(return, "no io_uring");
}

FIXTURE_TEARDOWN(raw)
{
	ring_exit(&self->r);
	if (self->dir[0])
		EXPECT_EQ(0, nullb_remove(self->dir));
}

/* One io_uring write of the pattern for @stream at @off, in @stream. */
static int write_stream(struct ring *r, int fd, off_t off, size_t len,
			int stream)
{
	struct io_uring_sqe sqe;
	void *buf;
	int ret;

	if (posix_memalign(&buf, 4096, len))
		return -ENOMEM;
	fill(buf, len, off, stream);
	sqe = uring_write_sqe(fd, buf, len, off, stream);
	ret = ring_run(r, &sqe);
	free(buf);
	return ret;
}

/* The limits have mainline's names and values; none without streams. */
TEST_F(raw, limits)
{
	char dir[256], dev[128], name[64];

	EXPECT_EQ(STREAMS, queue_limit(self->dev, "max_write_streams"));
	EXPECT_EQ(atoll(GRANULARITY),
		  queue_limit(self->dev, "write_stream_granularity"));

	snprintf(name, sizeof(name), "uring%d_none", getpid());
	ASSERT_EQ(0, nullb_make(name, 16, 0, GRANULARITY, dir, sizeof(dir),
				dev, sizeof(dev)));
	EXPECT_EQ(0, queue_limit(dev, "max_write_streams"));
	EXPECT_EQ(0, queue_limit(dev, "write_stream_granularity"));
	EXPECT_EQ(0, nullb_remove(dir));
}

/* Streams 1 to max_write_streams, each write in its own. */
TEST_F(raw, every_stream)
{
	struct stats st;
	int fd, s;

	fd = open(self->dev, O_WRONLY | O_DIRECT);
	ASSERT_LE(0, fd);
	for (s = 1; s <= STREAMS; s++)
		ASSERT_EQ(LEN, write_stream(&self->r, fd, s << 20, LEN, s));
	ASSERT_EQ(0, close(fd));

	ASSERT_EQ(0, read_stats(self->dir, &st));
	for (s = 1; s <= STREAMS; s++) {
		EXPECT_EQ(1, st.requests[s]);
		EXPECT_EQ(LEN_SECTORS, st.sectors[s]);
		EXPECT_EQ(0, check_at(self->dev, s << 20, LEN, s));
	}
	EXPECT_EQ(-1, only(&st, (const int []){ 1, 2, 3, 4, 5, 6, 7, 8, -1 }));
}

/*
 * The stream of a write comes before the ID of its file, which the
 * writes that choose none get.
 */
TEST_F(raw, before_the_file_id)
{
	struct stats st;
	int fd;

	fd = open_stream(self->dev, O_WRONLY | O_DIRECT, 5);
	ASSERT_LE(0, fd);
	ASSERT_EQ(LEN, write_stream(&self->r, fd, 0, LEN, 2));
	ASSERT_EQ(LEN, uring_write(fd, 1 << 20, LEN, 5, 0));
	ASSERT_EQ(0, write_at(fd, 2 << 20, LEN, 5));
	ASSERT_EQ(0, close(fd));

	ASSERT_EQ(0, read_stats(self->dir, &st));
	EXPECT_EQ(LEN_SECTORS, st.sectors[2]);
	EXPECT_EQ(2 * LEN_SECTORS, st.sectors[5]);
	EXPECT_EQ(-1, only(&st, (const int []){ 2, 5, -1 }));
}

/*
 * A stream the device does not have fails the write with EINVAL, as in
 * mainline, and nothing reaches the device; the ID of a file above the
 * count is not refused.  A device without streams has none to choose.
 */
TEST_F(raw, above_the_count)
{
	char dir[256], dev[128], name[64], disk[64];
	unsigned long long writes;
	struct stats st;
	int fd;

	snprintf(disk, sizeof(disk), "%s", self->dev + strlen("/dev/"));
	fd = open(self->dev, O_WRONLY | O_DIRECT);
	ASSERT_LE(0, fd);
	writes = disk_stat(disk, 4);
	EXPECT_EQ(-EINVAL, write_stream(&self->r, fd, 0, LEN, STREAMS + 1));
	EXPECT_EQ(-EINVAL, write_stream(&self->r, fd, 0, LEN, 255));
	EXPECT_EQ(writes, disk_stat(disk, 4));
	ASSERT_EQ(0, read_stats(self->dir, &st));
	EXPECT_EQ(-1, only(&st, (const int []){ -1 }));

	ASSERT_EQ(0, posix_fadvise(fd, STREAMS + 1, 0, POSIX_FADV_STREAMID));
	ASSERT_EQ(LEN, write_stream(&self->r, fd, 0, LEN, 0));
	ASSERT_EQ(0, close(fd));
	ASSERT_EQ(0, read_stats(self->dir, &st));
	EXPECT_EQ(LEN_SECTORS, st.sectors[STREAMS + 1]);

	snprintf(name, sizeof(name), "uring%d_none", getpid());
	ASSERT_EQ(0, nullb_make(name, 16, 0, "0", dir, sizeof(dir), dev,
				sizeof(dev)));
	fd = open(dev, O_WRONLY | O_DIRECT);
	ASSERT_LE(0, fd);
	EXPECT_EQ(-EINVAL, write_stream(&self->r, fd, 0, LEN, 1));
	EXPECT_EQ(LEN, write_stream(&self->r, fd, 0, LEN, 0));
	EXPECT_EQ(0, close(fd));
	EXPECT_EQ(0, nullb_remove(dir));
}

/* Reads ignore the field, whatever it holds. */
TEST_F(raw, reads_ignore_it)
{
	struct io_uring_sqe sqe = { };
	void *buf;
	int fd;

	fd = open(self->dev, O_RDONLY | O_DIRECT);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, posix_memalign(&buf, 4096, LEN));
	sqe.opcode = IORING_OP_READ;
	sqe.fd = fd;
	sqe.addr = (uintptr_t)buf;
	sqe.len = LEN;
	sqe_set_write_stream(&sqe, 255);
	EXPECT_EQ(LEN, ring_run(&self->r, &sqe));
	free(buf);
	EXPECT_EQ(0, close(fd));
}

/*
 * Buffered writes ignore the stream of the write, as in mainline: their
 * data is written back later, with the ID of the inode.
 */
TEST_F(raw, buffered_ignores_it)
{
	struct stats st;
	int fd;

	fd = open(self->dev, O_WRONLY);
	ASSERT_LE(0, fd);
	ASSERT_EQ(LEN, write_stream(&self->r, fd, 0, LEN, 3));
	ASSERT_EQ(LEN, write_stream(&self->r, fd, 1 << 20, LEN, STREAMS + 1));
	ASSERT_EQ(0, fsync(fd));
	ASSERT_EQ(0, read_stats(self->dir, &st));
	EXPECT_EQ(2 * LEN_SECTORS, st.sectors[0]);
	EXPECT_EQ(-1, only(&st, (const int []){ 0, -1 }));

	ASSERT_EQ(0, write_attr(self->dir, "stream_stats", "0"));
	ASSERT_EQ(0, posix_fadvise(fd, 4, 0, POSIX_FADV_STREAMID));
	ASSERT_EQ(LEN, write_stream(&self->r, fd, 2 << 20, LEN, 3));
	ASSERT_EQ(0, fsync(fd));
	ASSERT_EQ(0, close(fd));
	ASSERT_EQ(0, read_stats(self->dir, &st));
	EXPECT_EQ(LEN_SECTORS, st.sectors[4]);
	EXPECT_EQ(-1, only(&st, (const int []){ 4, -1 }));
	EXPECT_EQ(0, check_at(self->dev, 2 << 20, LEN, 3));
}

/*
 * Vectored and fixed-buffer writes, and a registered file, take the
 * stream of the request too.
 */
TEST_F(raw, opcodes)
{
	struct io_uring_sqe sqe;
	struct iovec iov[2], reg;
	struct stats st;
	void *buf;
	int fd;

	fd = open(self->dev, O_WRONLY | O_DIRECT);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, posix_memalign(&buf, 4096, 2 * LEN));

	fill(buf, 2 * LEN, 0, 6);
	iov[0] = (struct iovec){ buf, LEN };
	iov[1] = (struct iovec){ buf + LEN, LEN };
	sqe = uring_write_sqe(fd, iov, 2, 0, 6);
	sqe.opcode = IORING_OP_WRITEV;
	EXPECT_EQ(2 * LEN, ring_run(&self->r, &sqe));

	fill(buf, LEN, 1 << 20, 7);
	reg = (struct iovec){ buf, 2 * LEN };
	ASSERT_EQ(0, syscall(__NR_io_uring_register, self->r.fd,
			     IORING_REGISTER_BUFFERS, &reg, 1));
	sqe = uring_write_sqe(fd, buf, LEN, 1 << 20, 7);
	sqe.opcode = IORING_OP_WRITE_FIXED;
	sqe.buf_index = 0;
	EXPECT_EQ(LEN, ring_run(&self->r, &sqe));

	fill(buf, LEN, 2 << 20, 1);
	ASSERT_EQ(0, syscall(__NR_io_uring_register, self->r.fd,
			     IORING_REGISTER_FILES, &fd, 1));
	sqe = uring_write_sqe(0, buf, LEN, 2 << 20, 1);
	sqe.flags = IOSQE_FIXED_FILE;
	EXPECT_EQ(LEN, ring_run(&self->r, &sqe));
	free(buf);
	ring_exit(&self->r);
	ASSERT_EQ(0, close(fd));

	ASSERT_EQ(0, read_stats(self->dir, &st));
	EXPECT_EQ(2 * LEN_SECTORS, st.sectors[6]);
	EXPECT_EQ(LEN_SECTORS, st.sectors[7]);
	EXPECT_EQ(LEN_SECTORS, st.sectors[1]);
	EXPECT_EQ(-1, only(&st, (const int []){ 1, 6, 7, -1 }));
	EXPECT_EQ(0, check_at(self->dev, 0, 2 * LEN, 6));
	EXPECT_EQ(0, check_at(self->dev, 1 << 20, LEN, 7));
	EXPECT_EQ(0, check_at(self->dev, 2 << 20, LEN, 1));
}

/*
 * A partition has no streams to choose from, as in mainline: a stream
 * fails there, and its lifetime hint is no stream.  Its ID still works.
 */
TEST_F(raw, partition)
{
	__u64 hint = 2;	/* RWH_WRITE_LIFE_SHORT */
	char part[160];
	struct stats st;
	int fd;

	fd = open(self->dev, O_WRONLY);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, make_partitions(fd));
	ASSERT_EQ(0, close(fd));
	snprintf(part, sizeof(part), "%sp1", self->dev);
	ASSERT_EQ(0, write_attr(self->dir, "stream_stats", "0"));

	fd = open(part, O_WRONLY | O_DIRECT);
	ASSERT_LE(0, fd);
	EXPECT_EQ(-EINVAL, write_stream(&self->r, fd, 0, LEN, 1));
	ASSERT_EQ(0, fcntl(fd, F_SET_RW_HINT, &hint));
	EXPECT_EQ(LEN, write_stream(&self->r, fd, 0, LEN, 0));
	ASSERT_EQ(0, posix_fadvise(fd, 3, 0, POSIX_FADV_STREAMID));
	EXPECT_EQ(LEN, write_stream(&self->r, fd, 1 << 20, LEN, 0));
	ASSERT_EQ(0, close(fd));

	ASSERT_EQ(0, read_stats(self->dir, &st));
	EXPECT_EQ(LEN_SECTORS, st.sectors[0]);
	EXPECT_EQ(LEN_SECTORS, st.sectors[3]);
	EXPECT_EQ(-1, only(&st, (const int []){ 0, 3, -1 }));
}

/*
 * A direct write to the node with no stream takes the one of its
 * lifetime hint's number, as in mainline (NONE 1 to EXTREME 5), if the
 * device has that many; the stream of the write or the ID of the file
 * comes first.  Buffered writes get no stream from it.
 */
TEST_F(raw, lifetime_hints)
{
	char dir[256], dev[128], name[64];
	__u64 hint;
	struct stats st;
	int fd;

	fd = open(self->dev, O_WRONLY | O_DIRECT);
	ASSERT_LE(0, fd);
	for (hint = 1; hint <= 5; hint++) {
		ASSERT_EQ(0, fcntl(fd, F_SET_RW_HINT, &hint));
		ASSERT_EQ(0, write_at(fd, hint << 20, LEN, hint));
	}
	ASSERT_EQ(LEN, write_stream(&self->r, fd, 8 << 20, LEN, 6));
	ASSERT_EQ(0, posix_fadvise(fd, 7, 0, POSIX_FADV_STREAMID));
	ASSERT_EQ(0, write_at(fd, 9 << 20, LEN, 7));
	ASSERT_EQ(0, close(fd));
	ASSERT_EQ(0, read_stats(self->dir, &st));
	for (hint = 1; hint <= 7; hint++)
		EXPECT_EQ(LEN_SECTORS, st.sectors[hint]);
	EXPECT_EQ(-1, only(&st, (const int []){ 1, 2, 3, 4, 5, 6, 7, -1 }));

	ASSERT_EQ(0, write_attr(self->dir, "stream_stats", "0"));
	fd = open(self->dev, O_WRONLY);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, write_at(fd, 10 << 20, LEN, 1));
	ASSERT_EQ(0, fsync(fd));
	ASSERT_EQ(0, close(fd));
	ASSERT_EQ(0, read_stats(self->dir, &st));
	EXPECT_EQ(LEN_SECTORS, st.sectors[0]);
	EXPECT_EQ(-1, only(&st, (const int []){ 0, -1 }));

	/* A hint above the count is no stream. */
	snprintf(name, sizeof(name), "uring%d_four", getpid());
	ASSERT_EQ(0, nullb_make(name, 16, 4, "0", dir, sizeof(dir), dev,
				sizeof(dev)));
	fd = open(dev, O_WRONLY | O_DIRECT);
	ASSERT_LE(0, fd);
	hint = 5;
	ASSERT_EQ(0, fcntl(fd, F_SET_RW_HINT, &hint));
	ASSERT_EQ(0, write_at(fd, 0, LEN, 5));
	hint = 4;
	ASSERT_EQ(0, fcntl(fd, F_SET_RW_HINT, &hint));
	ASSERT_EQ(0, write_at(fd, 1 << 20, LEN, 4));
	ASSERT_EQ(0, close(fd));
	ASSERT_EQ(0, read_stats(dir, &st));
	EXPECT_EQ(LEN_SECTORS, st.sectors[0]);
	EXPECT_EQ(LEN_SECTORS, st.sectors[4]);
	EXPECT_EQ(-1, only(&st, (const int []){ 0, 4, -1 }));
	EXPECT_EQ(0, nullb_remove(dir));
}

/* A file system on a null_blk device with streams. */
FIXTURE(fs) {
	char dir[256];
	char dev[128];
	char mnt[64];
	struct ring r;
};

FIXTURE_VARIANT(fs) {
	const struct fs_type *fs;
	const char *opts;
	/* direct writes become buffered ones, with the inode's ID */
	bool direct_buffered;
};

FIXTURE_VARIANT_ADD(fs, ext4) { .fs = &fs_ext4 };
FIXTURE_VARIANT_ADD(fs, xfs) { .fs = &fs_xfs };
/* Without data checksums btrfs writes direct I/O directly... */
FIXTURE_VARIANT_ADD(fs, btrfs_nodatasum) {
	.fs = &fs_btrfs, .opts = "nodatasum",
};

/* ...with them, as buffered I/O. */
FIXTURE_VARIANT_ADD(fs, btrfs) { .fs = &fs_btrfs, .direct_buffered = true };

FIXTURE_SETUP(fs)
{
	char name[64];

	if (access(NULLB, F_OK))
		SKIP(return, "no null_blk configfs");
	if (!fs_have_mkfs(variant->fs))
		SKIP(return, "no mkfs for %s", variant->fs->name);
	snprintf(name, sizeof(name), "uringfs%d", getpid());
	ASSERT_EQ(0, nullb_make(name, 512, 16, "0", self->dir,
				sizeof(self->dir), self->dev,
				sizeof(self->dev)));
	ASSERT_EQ(0, run(variant->fs->mkfs, self->dev));
	snprintf(self->mnt, sizeof(self->mnt), "/tmp/uring_test.%d", getpid());
	ASSERT_EQ(0, mkdir(self->mnt, 0755));
	ASSERT_EQ(0, fs_mount(variant->fs, self->dev, self->mnt,
			      variant->opts));
	if (ring_init(&self->r))
		SKIP(return, "no io_uring");
	sync();
	ASSERT_EQ(0, write_attr(self->dir, "stream_stats", "0"));
}

FIXTURE_TEARDOWN(fs)
{
	ring_exit(&self->r);
	if (self->mnt[0]) {
		umount(self->mnt);
		rmdir(self->mnt);
	}
	if (self->dir[0])
		EXPECT_EQ(0, nullb_remove(self->dir));
}

/*
 * Direct writes to a file, 1 MiB in each of streams 5 and 6 and 1 MiB
 * choosing none, of a file whose ID is 2: each reaches its stream at the
 * device, the file system's own writes stream 0.  Where direct writes
 * become buffered ones, all of the data goes in the inode's ID.
 */
TEST_F(fs, direct_writes)
{
	static const int pattern[] = { 5, 6, 2 };
	struct stats st;
	char path[128];
	int fd, s;

	snprintf(path, sizeof(path), "%s/f", self->mnt);
	fd = open(path, O_CREAT | O_WRONLY | O_DIRECT, 0644);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, posix_fadvise(fd, 2, 0, POSIX_FADV_STREAMID));
	ASSERT_EQ(1 << 20, write_stream(&self->r, fd, 0, 1 << 20, 5));
	ASSERT_EQ(1 << 20, write_stream(&self->r, fd, 1 << 20, 1 << 20, 6));
	ASSERT_EQ(1 << 20, uring_write(fd, 2 << 20, 1 << 20, 2, 0));
	ASSERT_EQ(0, fsync(fd));
	ASSERT_EQ(0, close(fd));
	sync();

	ASSERT_EQ(0, read_stats(self->dir, &st));
	TH_LOG("%s: streams 2 %llu, 5 %llu, 6 %llu, 0 %llu sectors",
	       variant->fs->name, st.sectors[2], st.sectors[5], st.sectors[6],
	       st.sectors[0]);
	if (variant->direct_buffered) {
		EXPECT_EQ(3 * 2048, st.sectors[2]);
		EXPECT_EQ(-1, only(&st, (const int []){ 0, 2, -1 }));
	} else {
		EXPECT_EQ(2048, st.sectors[5]);
		EXPECT_EQ(2048, st.sectors[6]);
		EXPECT_EQ(2048, st.sectors[2]);
		EXPECT_EQ(-1, only(&st, (const int []){ 0, 2, 5, 6, -1 }));
	}

	fd = open(path, O_RDONLY);
	ASSERT_LE(0, fd);
	for (s = 0; s < 3; s++) {
		char *got = malloc(1 << 20), *want = malloc(1 << 20);

		ASSERT_TRUE(got && want);
		fill(want, 1 << 20, s << 20, pattern[s]);
		ASSERT_EQ(1 << 20, pread(fd, got, 1 << 20, s << 20));
		EXPECT_EQ(0, memcmp(got, want, 1 << 20));
		free(got);
		free(want);
	}
	EXPECT_EQ(0, close(fd));
}

/*
 * A stream above the count is not refused on a file, whose data may go
 * to several devices: the driver folds it as it folds the ID of a file.
 */
TEST_F(fs, above_the_count)
{
	struct stats st;
	char path[128];
	int fd;

	snprintf(path, sizeof(path), "%s/g", self->mnt);
	fd = open(path, O_CREAT | O_WRONLY | O_DIRECT, 0644);
	ASSERT_LE(0, fd);
	EXPECT_EQ(LEN, write_stream(&self->r, fd, 0, LEN, 255));
	EXPECT_EQ(0, close(fd));
	/* null_blk folds nothing: it counts the stream it gets. */
	ASSERT_EQ(0, read_stats(self->dir, &st));
	EXPECT_EQ(variant->direct_buffered ? 0 : LEN_SECTORS,
		  st.sectors[255]);
}

TEST_HARNESS_MAIN
