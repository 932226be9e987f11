// SPDX-License-Identifier: GPL-2.0
/*
 * io.stream, the write stream of a cgroup's data, on null_blk devices with
 * streams: what each stream counted in stream_stats must be exactly what
 * the processes of each cgroup wrote.  Direct writes take the stream of
 * the submitter's cgroup, of the nearest ancestor that sets one, of the
 * cgroup the process is in when it writes; the stream of a file or of one
 * write comes first; processes outside any such cgroup write in none.
 * Buffered writes take the stream of the cgroup that owns the inode's
 * writeback, but not on a device that is held.  On ext4, xfs and btrfs
 * each cgroup's files, buffered and direct, reach its stream and nothing
 * else does (metadata and journal in none), and read back after a
 * remount; through dm-linear too.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>

#include "../kselftest_harness.h"
#include "cgroup.h"
#include "fs.h"
#include "uring.h"

#define STREAMS		8
#define MIB_SECTORS	2048ULL
#define MNT		"/tmp/cgroup_test"
#define DM		"/dev/mapper/cgroup_test"

/* t1 and t2, two tenants; p, a parent of a (which inherits) and b. */
static const struct {
	const char *path;
	int stream;
} cgroups[] = {
	{ "t1", 3 }, { "t2", 5 }, { "p", 4 }, { "p/a", 0 }, { "p/b", 7 },
};

#define N_CG	ARRAY_SIZE(cgroups)

static int cgroups_make(void)
{
	size_t i;

	if (cg_setup())
		return -1;
	for (i = 0; i < N_CG; i++) {
		if (cg_make(cgroups[i].path, cgroups[i].stream))
			return -1;
		if (!strcmp(cgroups[i].path, "p") && cg_delegate("p"))
			return -1;
	}
	return 0;
}

static void cgroups_remove(void)
{
	int i;

	for (i = N_CG - 1; i >= 0; i--)
		cg_remove(cgroups[i].path);
}

/* A write of the pattern for @id, 1 MiB at @mib MiB, through @dev. */
struct job {
	const char *dev;
	int flags;		/* O_DIRECT, O_EXCL, or 0 for buffered */
	int mib;
	int id;
	int fadvise;		/* the file's stream ID, or 0 */
	int uring;		/* the stream of the write (io_uring), or 0 */
	const char *move_to;	/* then move to this cgroup and write again */
};

static int job_write(const struct job *j, int mib)
{
	int fd, ret;

	fd = open(j->dev, O_WRONLY | j->flags);
	if (fd < 0)
		return -1;
	if (j->fadvise && posix_fadvise(fd, j->fadvise, 0, POSIX_FADV_STREAMID))
		ret = -1;
	else if (j->uring)
		ret = uring_write(fd, (off_t)mib << 20, 1 << 20, j->id,
				  j->uring) == 1 << 20 ? 0 : -1;
	else
		ret = write_at(fd, (off_t)mib << 20, 1 << 20, j->id);
	if (!ret && !(j->flags & O_DIRECT))
		ret = fsync(fd);
	return close(fd) || ret ? -1 : 0;
}

static int job_run(void *arg)
{
	const struct job *j = arg;

	if (job_write(j, j->mib))
		return -1;
	return j->move_to && (cg_enter(j->move_to) || job_write(j, j->mib + 1));
}

FIXTURE(raw) {
	char dir[256];
	char dev[128];
};

FIXTURE_SETUP(raw)
{
	char name[64];

	if (access(NULLB, F_OK))
		SKIP(return, "no null_blk configfs");
	snprintf(name, sizeof(name), "cgroup%d", getpid());
	ASSERT_EQ(0, nullb_create(name, 64, STREAMS, 0, self->dir,
				  sizeof(self->dir), self->dev,
				  sizeof(self->dev)));
	ASSERT_EQ(0, cgroups_make());
}

FIXTURE_TEARDOWN(raw)
{
	cgroups_remove();
	if (self->dir[0])
		nullb_remove(self->dir);
}

/* The file: only below the root, 0 by default, 0 to 255. */
TEST_F(raw, io_stream_file)
{
	char buf[16];

	EXPECT_NE(0, access(CG_ROOT "/io.stream", F_OK));
	ASSERT_LT(0, read_file(CG_ROOT "/t1/io.stream", buf, sizeof(buf)));
	EXPECT_STREQ("3", buf);
	ASSERT_LT(0, read_file(CG_ROOT "/p/a/io.stream", buf, sizeof(buf)));
	EXPECT_STREQ("0", buf);
	EXPECT_EQ(-1, write_attr(CG_ROOT "/t1", "io.stream", "256"));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, write_attr(CG_ROOT "/t1", "io.stream", "-1"));
	EXPECT_EQ(-1, write_attr(CG_ROOT "/t1", "io.stream", "x"));
	ASSERT_LT(0, read_file(CG_ROOT "/t1/io.stream", buf, sizeof(buf)));
	EXPECT_STREQ("3", buf);
	EXPECT_EQ(0, write_attr(CG_ROOT "/t1", "io.stream", "255\n"));
	ASSERT_LT(0, read_file(CG_ROOT "/t1/io.stream", buf, sizeof(buf)));
	EXPECT_STREQ("255", buf);
}

/*
 * Direct writes: the submitter's cgroup, an inherited stream, a file's ID
 * and the stream of one write before the cgroup's, a process that moves,
 * and one in the root cgroup.
 */
TEST_F(raw, direct_writes)
{
	const struct job jobs[] = {
		{ .mib = 0, .id = 3 },
		{ .mib = 1, .id = 5 },
		{ .mib = 2, .id = 4 },
		{ .mib = 3, .id = 7 },
		{ .mib = 4, .id = 9, .fadvise = 9 },
		{ .mib = 5, .id = 2, .uring = 2 },
		{ .mib = 6, .id = 3, .move_to = "t2" },	/* and 7 in t2 */
	};
	static const char * const where[] = { "t1", "t2", "p/a", "p/b", "t1", "t1", "t1" };
	unsigned long long want[MAX_IDS] = { 0 };
	struct stats st;
	struct job j;
	size_t i;

	ASSERT_EQ(0, write_attr(self->dir, "stream_stats", "0"));
	for (i = 0; i < ARRAY_SIZE(jobs); i++) {
		j = jobs[i];
		j.dev = self->dev;
		j.flags = O_DIRECT;
		EXPECT_EQ(0, cg_run(where[i], job_run, &j)) TH_LOG("%zu", i);
		want[j.id] += MIB_SECTORS;
	}
	want[5] += MIB_SECTORS;
	/* This process is in no cgroup with a stream. */
	j = (struct job){ .dev = self->dev, .flags = O_DIRECT, .mib = 8 };
	EXPECT_EQ(0, job_write(&j, 8));
	want[0] += MIB_SECTORS;

	ASSERT_EQ(0, read_stats(self->dir, &st));
	for (i = 0; i < MAX_IDS; i++)
		EXPECT_EQ(want[i], st.sectors[i]) TH_LOG("stream %zu", i);
	for (i = 0; i < ARRAY_SIZE(jobs); i++)
		EXPECT_EQ(0, check_at(self->dev, (off_t)jobs[i].mib << 20,
				      1 << 20, jobs[i].id));
	EXPECT_EQ(0, check_at(self->dev, 7 << 20, 1 << 20, 3));
}

/*
 * Buffered writes to the device: its writeback takes the stream of the
 * cgroup that dirtied it, unless the device is held (here by an O_EXCL
 * opener), whose page cache holds its holder's metadata.
 */
TEST_F(raw, buffered_writes)
{
	struct job j = { .dev = self->dev, .mib = 0, .id = 3 };
	struct stats st;

	ASSERT_EQ(0, write_attr(self->dir, "stream_stats", "0"));
	EXPECT_EQ(0, cg_run("t1", job_run, &j));
	ASSERT_EQ(0, read_stats(self->dir, &st));
	EXPECT_EQ(MIB_SECTORS, st.sectors[3]);
	EXPECT_EQ(-1, only(&st, (const int []){ 3, -1 }));

	ASSERT_EQ(0, write_attr(self->dir, "stream_stats", "0"));
	j = (struct job){ .dev = self->dev, .flags = O_EXCL, .mib = 1,
			  .id = 5 };
	EXPECT_EQ(0, cg_run("t2", job_run, &j));
	ASSERT_EQ(0, read_stats(self->dir, &st));
	EXPECT_EQ(MIB_SECTORS, st.sectors[0]);
	EXPECT_EQ(-1, only(&st, (const int []){ 0, -1 }));
	EXPECT_EQ(0, check_at(self->dev, 0, 1 << 20, 3));
	EXPECT_EQ(0, check_at(self->dev, 1 << 20, 1 << 20, 5));
}

/* The same through dm-linear: the member counts the cgroups' streams. */
TEST_F(raw, dm_linear)
{
	struct job j = { .dev = DM, .flags = O_DIRECT, .mib = 0, .id = 3 };
	char cmd[256];
	struct stats st;

	setenv("DM_DISABLE_UDEV", "1", 1);
	snprintf(cmd, sizeof(cmd),
		 "dmsetup create cgroup_test --table '0 131072 linear %s 0'",
		 self->dev);
	ASSERT_EQ(0, run("%s", cmd));
	EXPECT_EQ(STREAMS, queue_limit(DM, "max_write_streams"));
	ASSERT_EQ(0, write_attr(self->dir, "stream_stats", "0"));
	EXPECT_EQ(0, cg_run("t1", job_run, &j));
	j.mib = 1;
	j.id = 5;
	EXPECT_EQ(0, cg_run("t2", job_run, &j));
	EXPECT_EQ(0, run("%s", "dmsetup remove cgroup_test"));
	ASSERT_EQ(0, read_stats(self->dir, &st));
	EXPECT_EQ(MIB_SECTORS, st.sectors[3]);
	EXPECT_EQ(MIB_SECTORS, st.sectors[5]);
	EXPECT_EQ(-1, only(&st, (const int []){ 3, 5, -1 }));
}

/* A file of @mib MiB, "MNT/<name>", written by the process of a cgroup. */
struct file_job {
	const char *name;
	int mib;
	int id;			/* the pattern */
	int fadvise;		/* the file's stream ID, or 0 */
	enum fs_flush flush;	/* FLUSH_FSYNC or FLUSH_DIRECT */
};

static int file_run(void *arg)
{
	const struct file_job *f = arg;
	char path[256];

	snprintf(path, sizeof(path), MNT "/%s", f->name);
	/* fs_write_file() sets the file's ID, 0 clears it. */
	return fs_write_file(path, f->fadvise, f->mib, f->id, f->flush);
}

FIXTURE(fs) {
	char dir[256];
	char dev[128];
	bool mounted;
};

FIXTURE_VARIANT(fs) {
	const struct fs_type *fs;
};

FIXTURE_VARIANT_ADD(fs, ext4) { .fs = &fs_ext4 };
FIXTURE_VARIANT_ADD(fs, xfs) { .fs = &fs_xfs };
FIXTURE_VARIANT_ADD(fs, btrfs) { .fs = &fs_btrfs };

FIXTURE_SETUP(fs)
{
	char name[64];

	if (access(NULLB, F_OK))
		SKIP(return, "no null_blk configfs");
	ASSERT_TRUE(fs_have_mkfs(variant->fs));
	snprintf(name, sizeof(name), "cgfs%d", getpid());
	ASSERT_EQ(0, nullb_create(name, 512, STREAMS, 0, self->dir,
				  sizeof(self->dir), self->dev,
				  sizeof(self->dev)));
	ASSERT_EQ(0, run(variant->fs->mkfs, self->dev));
	mkdir(MNT, 0755);
	ASSERT_EQ(0, fs_mount(variant->fs, self->dev, MNT, NULL));
	self->mounted = true;
	ASSERT_EQ(0, cgroups_make());
}

FIXTURE_TEARDOWN(fs)
{
	cgroups_remove();
	if (self->mounted)
		umount(MNT);
	if (self->dir[0])
		nullb_remove(self->dir);
}

/*
 * Each cgroup's files, written back and direct, in its stream, and all of
 * their data; a file's own ID before the cgroup's; nothing else in a
 * stream.  Read back after a remount, and the file system checks clean.
 */
TEST_F(fs, files)
{
	const struct file_job files[] = {
		{ "a", 4, 3, 0, FLUSH_FSYNC },
		{ "b", 2, 3, 0, FLUSH_DIRECT },
		{ "c", 4, 5, 0, FLUSH_FSYNC },
		{ "d", 2, 5, 0, FLUSH_DIRECT },
		{ "e", 1, 9, 9, FLUSH_FSYNC },
		{ "f", 2, 7, 0, FLUSH_DIRECT },
	};
	static const char * const where[] = { "t1", "t1", "t2", "t2", "t1", "p/b" };
	unsigned long long want[MAX_IDS] = { 0 };
	char path[256];
	struct stats st;
	size_t i;
	int m;

	ASSERT_EQ(0, write_attr(self->dir, "stream_stats", "0"));
	for (i = 0; i < ARRAY_SIZE(files); i++) {
		EXPECT_EQ(0, cg_run(where[i], file_run, (void *)&files[i]))
			TH_LOG("file %s", files[i].name);
		want[files[i].id] += files[i].mib * MIB_SECTORS;
	}
	sync();
	ASSERT_EQ(0, read_stats(self->dir, &st));
	for (i = 1; i < MAX_IDS; i++)
		EXPECT_EQ(want[i], st.sectors[i]) TH_LOG("stream %zu", i);
	EXPECT_LT(0, st.sectors[0]);

	ASSERT_EQ(0, umount(MNT));
	self->mounted = false;
	EXPECT_EQ(0, run(variant->fs->fsck, self->dev));
	ASSERT_EQ(0, fs_mount(variant->fs, self->dev, MNT, NULL));
	self->mounted = true;
	for (i = 0; i < ARRAY_SIZE(files); i++) {
		snprintf(path, sizeof(path), MNT "/%s", files[i].name);
		for (m = 0; m < files[i].mib; m++)
			EXPECT_EQ(0, check_at(path, (off_t)m << 20, 1 << 20,
					      files[i].id));
	}
}

TEST_HARNESS_MAIN
