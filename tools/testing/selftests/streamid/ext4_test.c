// SPDX-License-Identifier: GPL-2.0
/*
 * ext4 on a null_blk device with streams: the data of a file written
 * buffered (then fsync) and of one written with O_DIRECT land in each
 * file's stream, exactly; ext4's own metadata and journal carry no
 * stream.  The data reads back after a remount and e2fsck is clean.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "streamid.h"

#define FILE_MIB 4

FIXTURE(ext4) {
	char dir[256];
	char dev[128];
	char mnt[64];
};

FIXTURE_SETUP(ext4)
{
	char name[64], cmd[512];

	if (access(NULLB, F_OK))
		SKIP(return, "no null_blk configfs");
	if (system("command -v mkfs.ext4 >/dev/null"))
		SKIP(return, "no mkfs.ext4");
	snprintf(name, sizeof(name), "ext4_%d", getpid());
	ASSERT_EQ(0, nullb_create(name, 512, 8, 0, self->dir,
				  sizeof(self->dir), self->dev,
				  sizeof(self->dev)));
	snprintf(cmd, sizeof(cmd), "mkfs.ext4 -q -F %s", self->dev);
	ASSERT_EQ(0, system(cmd));
	snprintf(self->mnt, sizeof(self->mnt), "/tmp/ext4_test.%d", getpid());
	ASSERT_EQ(0, mkdir(self->mnt, 0755));
	ASSERT_EQ(0, mount(self->dev, self->mnt, "ext4", 0, NULL));
	/* What mkfs wrote is not what this test looks at. */
	ASSERT_EQ(0, write_attr(self->dir, "stream_stats", "0"));
}

FIXTURE_TEARDOWN(ext4)
{
	if (!self->dir[0])
		return;
	umount(self->mnt);
	rmdir(self->mnt);
	EXPECT_EQ(0, nullb_remove(self->dir));
}

/* Write FILE_MIB MiB of the pattern for @id to @path, with stream @id. */
static int write_file(const char *path, int flags, int id)
{
	int fd, i, ret = 0;

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | flags, 0644);
	if (fd < 0 || posix_fadvise(fd, id, 0, POSIX_FADV_STREAMID))
		return -1;
	for (i = 0; i < FILE_MIB && !ret; i++)
		ret = write_at(fd, i << 20, 1 << 20, id);
	if (fsync(fd))
		ret = -1;
	close(fd);
	return ret;
}

TEST_F(ext4, data_in_file_streams)
{
	static const int ids[] = { 0, 6, 7, -1 };
	char a[128], b[128], cmd[512];
	struct stats st;
	int i;

	snprintf(a, sizeof(a), "%s/buffered", self->mnt);
	snprintf(b, sizeof(b), "%s/direct", self->mnt);
	ASSERT_EQ(0, write_file(a, 0, 6));
	ASSERT_EQ(0, write_file(b, O_DIRECT, 7));

	ASSERT_EQ(0, read_stats(self->dir, &st));
	EXPECT_EQ(FILE_MIB * 2048, st.sectors[6]);
	EXPECT_EQ(FILE_MIB * 2048, st.sectors[7]);
	EXPECT_EQ(-1, only(&st, ids)) TH_LOG("stream %d", only(&st, ids));
	TH_LOG("metadata and journal: %llu sectors in stream 0",
	       st.sectors[0]);

	ASSERT_EQ(0, umount(self->mnt));
	snprintf(cmd, sizeof(cmd), "e2fsck -fn %s >/dev/null 2>&1", self->dev);
	EXPECT_EQ(0, system(cmd));
	ASSERT_EQ(0, mount(self->dev, self->mnt, "ext4", 0, NULL));
	for (i = 0; i < FILE_MIB; i++) {
		EXPECT_EQ(0, check_at(a, i << 20, 1 << 20, 6));
		EXPECT_EQ(0, check_at(b, i << 20, 1 << 20, 7));
	}
}

/*
 * The ID of an inode goes with it: a file made after another file with
 * a stream was deleted starts without one, even where the kernel reuses
 * the memory of the old inode for the new.
 */
TEST_F(ext4, new_file_has_no_stream)
{
	static const int ids[] = { 0, -1 };
	char path[128];
	struct stats st;
	int i, fd;

	for (i = 0; i < 16; i++) {
		snprintf(path, sizeof(path), "%s/old%d", self->mnt, i);
		ASSERT_EQ(0, write_file(path, 0, 9));
		ASSERT_EQ(0, unlink(path));
	}
	/* Let the deleted inodes go back to the allocator. */
	sync();
	usleep(200000);
	ASSERT_EQ(0, write_attr(self->dir, "stream_stats", "0"));

	for (i = 0; i < 64; i++) {
		snprintf(path, sizeof(path), "%s/new%d", self->mnt, i);
		fd = open(path, O_WRONLY | O_CREAT, 0644);
		ASSERT_LE(0, fd);
		ASSERT_EQ(0, write_at(fd, 0, 65536, 0));
		ASSERT_EQ(0, fsync(fd));
		close(fd);
	}
	ASSERT_EQ(0, read_stats(self->dir, &st));
	EXPECT_EQ(-1, only(&st, ids)) TH_LOG("stream %d", only(&st, ids));
	EXPECT_LE(64 * 128, st.sectors[0]);
	for (i = 0; i < 64; i++) {
		snprintf(path, sizeof(path), "%s/new%d", self->mnt, i);
		EXPECT_EQ(0, check_at(path, 0, 65536, 0));
	}
}

TEST_HARNESS_MAIN
