// SPDX-License-Identifier: GPL-2.0
/*
 * The stream ID of a directory (POSIX_FADV_STREAMID on a directory), on
 * ext4, xfs and btrfs on a null_blk device with streams, counted in its
 * stream_stats: the files and subdirectories created in the directory
 * afterwards write in its stream, buffered and direct, also after a
 * remount; files that existed before do not, nor do those created after
 * the ID changed, which take the new one; the file's own ID and the stream
 * of one write come first, a cgroup's stream after.  Only the owner sets
 * it, and not on an immutable directory; tmpfs refuses it; through
 * overlayfs it reaches the upper directory, and the files created there,
 * also over the whiteout of a lower file.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sys/xattr.h>

#include "../kselftest_harness.h"
#include "cgroup.h"
#include "fs.h"
#include "uring.h"

#define STREAMS		8
#define MIB_SECTORS	2048ULL
#define MNT		"/tmp/dir_test"
#define NAME		"trusted.streamid"
#define OVL_OPTS	"lowerdir=" MNT "/lower,upperdir=" MNT "/upper,workdir=" MNT "/work"

/* Set the stream ID of the directory @path; 0 or the error number. */
static int dir_set(const char *path, int id)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY), ret;

	if (fd < 0)
		return -1;
	ret = posix_fadvise(fd, id, 0, POSIX_FADV_STREAMID);
	close(fd);
	return ret;
}

/* The stream ID fdinfo shows for the directory @path. */
static int dir_get(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY), id;

	if (fd < 0)
		return -1;
	id = fdinfo_streamid(fd);
	close(fd);
	return id;
}

/*
 * Write @mib MiB of the pattern for @id to @path, through the page cache
 * and fsync(), or O_DIRECT, or with the stream of each io_uring write
 * @uring; with the file's own ID @fadvise if not 0.
 */
static int write_file(const char *path, int mib, int id, bool direct,
		      int fadvise, int uring)
{
	int fd, m, ret = 0;

	fd = open(path, O_WRONLY | O_CREAT | (direct ? O_DIRECT : 0), 0644);
	if (fd < 0)
		return -1;
	if (fadvise && posix_fadvise(fd, fadvise, 0, POSIX_FADV_STREAMID))
		ret = -1;
	for (m = 0; m < mib && !ret; m++) {
		if (uring)
			ret = uring_write(fd, (off_t)m << 20, 1 << 20, id,
					  uring) == 1 << 20 ? 0 : -1;
		else
			ret = write_at(fd, (off_t)m << 20, 1 << 20, id);
	}
	if (!ret && !direct)
		ret = fsync(fd);
	return close(fd) || ret ? -1 : 0;
}

static int check_file(const char *path, int mib, int id)
{
	int m;

	for (m = 0; m < mib; m++)
		if (check_at(path, (off_t)m << 20, 1 << 20, id))
			return -1;
	return 0;
}

FIXTURE(dir) {
	char dir[256];
	char dev[128];
	bool mounted;
};

FIXTURE_VARIANT(dir) {
	const struct fs_type *fs;
};

FIXTURE_VARIANT_ADD(dir, ext4) { .fs = &fs_ext4 };
FIXTURE_VARIANT_ADD(dir, xfs) { .fs = &fs_xfs };
FIXTURE_VARIANT_ADD(dir, btrfs) { .fs = &fs_btrfs };

/* A null_blk device with streams, @fs made on it and mounted on MNT. */
static void fs_up(struct __test_metadata *_metadata, const struct fs_type *fs,
		  char *dir, size_t dirlen, char *dev, size_t devlen,
		  bool *mounted)
{
	char name[64];

	if (access(NULLB, F_OK))
		SKIP(return, "no null_blk configfs");
	ASSERT_TRUE(fs_have_mkfs(fs));
	snprintf(name, sizeof(name), "dir%d", getpid());
	ASSERT_EQ(0, nullb_create(name, 512, STREAMS, 0, dir, dirlen, dev,
				  devlen));
	ASSERT_EQ(0, run(fs->mkfs, dev));
	mkdir(MNT, 0755);
	ASSERT_EQ(0, fs_mount(fs, dev, MNT, NULL));
	*mounted = true;
}

static void fs_down(const char *dir, bool mounted)
{
	if (mounted)
		umount(MNT);
	if (dir[0])
		nullb_remove(dir);
}

FIXTURE_SETUP(dir)
{
	fs_up(_metadata, variant->fs, self->dir, sizeof(self->dir), self->dev,
	      sizeof(self->dev), &self->mounted);
}

FIXTURE_TEARDOWN(dir)
{
	fs_down(self->dir, self->mounted);
}

static void remount(struct __test_metadata *_metadata,
		    const struct fs_type *fs, const char *dev, bool *mounted)
{
	ASSERT_EQ(0, umount(MNT));
	*mounted = false;
	ASSERT_EQ(0, fs_mount(fs, dev, MNT, NULL));
	*mounted = true;
}

/*
 * Files and subdirectories created in a tagged directory write in its
 * stream, buffered and direct, before and after a remount; a file that
 * was there before does not; changing or removing the ID leaves the files
 * made before as they are.
 */
TEST_F(dir, inherit)
{
	unsigned long long want[MAX_IDS] = { 0 };
	struct stats st;
	char buf[8];
	int i;

	ASSERT_EQ(0, mkdir(MNT "/log", 0755));
	ASSERT_EQ(0, mkdir(MNT "/base", 0755));
	ASSERT_EQ(0, write_file(MNT "/log/old", 1, 1, false, 0, 0));
	EXPECT_EQ(0, dir_get(MNT "/log"));
	ASSERT_EQ(0, dir_set(MNT "/log", 3));
	ASSERT_EQ(0, dir_set(MNT "/base", 5));
	EXPECT_EQ(3, dir_get(MNT "/log"));
	ASSERT_EQ(0, mkdir(MNT "/log/sub", 0755));
	EXPECT_EQ(3, dir_get(MNT "/log/sub"));
	EXPECT_EQ(1, getxattr(MNT "/log/sub", NAME, buf, sizeof(buf)));
	ASSERT_EQ(0, write_attr(self->dir, "stream_stats", "0"));
	EXPECT_EQ(0, write_file(MNT "/log/a", 2, 3, false, 0, 0));
	EXPECT_EQ(0, write_file(MNT "/log/sub/b", 1, 3, true, 0, 0));
	EXPECT_EQ(0, write_file(MNT "/base/c", 2, 5, true, 0, 0));
	EXPECT_EQ(0, write_file(MNT "/log/old", 1, 1, false, 0, 0));
	want[3] += 3 * MIB_SECTORS;
	want[5] += 2 * MIB_SECTORS;
	sync();
	ASSERT_EQ(0, read_stats(self->dir, &st));
	for (i = 1; i < MAX_IDS; i++)
		EXPECT_EQ(want[i], st.sectors[i]) TH_LOG("stream %d", i);

	/* After a remount, from the disk. */
	remount(_metadata, variant->fs, self->dev, &self->mounted);
	EXPECT_EQ(3, dir_get(MNT "/log"));
	EXPECT_EQ(3, dir_get(MNT "/log/sub"));
	ASSERT_EQ(0, write_attr(self->dir, "stream_stats", "0"));
	EXPECT_EQ(0, write_file(MNT "/log/a", 1, 3, true, 0, 0));
	EXPECT_EQ(0, write_file(MNT "/log/sub/b", 1, 3, false, 0, 0));
	EXPECT_EQ(0, write_file(MNT "/log/sub/new", 1, 3, false, 0, 0));
	EXPECT_EQ(0, write_file(MNT "/log/old", 1, 1, true, 0, 0));
	/* A new ID: new files take it, the others keep theirs. */
	ASSERT_EQ(0, dir_set(MNT "/log", 7));
	EXPECT_EQ(0, write_file(MNT "/log/d", 1, 7, false, 0, 0));
	EXPECT_EQ(0, write_file(MNT "/log/a", 1, 3, false, 0, 0));
	/* Removed: new files take none. */
	ASSERT_EQ(0, dir_set(MNT "/log", 0));
	EXPECT_EQ(0, dir_get(MNT "/log"));
	EXPECT_EQ(-1, getxattr(MNT "/log", NAME, buf, sizeof(buf)));
	EXPECT_EQ(0, write_file(MNT "/log/e", 1, 1, false, 0, 0));
	sync();
	ASSERT_EQ(0, read_stats(self->dir, &st));
	EXPECT_EQ(4 * MIB_SECTORS, st.sectors[3]);
	EXPECT_EQ(MIB_SECTORS, st.sectors[7]);
	EXPECT_EQ(-1, only(&st, (const int []){ 0, 3, 7, -1 }));

	remount(_metadata, variant->fs, self->dev, &self->mounted);
	EXPECT_EQ(0, check_file(MNT "/log/a", 2, 3));
	EXPECT_EQ(0, check_file(MNT "/log/sub/b", 1, 3));
	EXPECT_EQ(0, check_file(MNT "/log/sub/new", 1, 3));
	EXPECT_EQ(0, check_file(MNT "/base/c", 2, 5));
	EXPECT_EQ(0, check_file(MNT "/log/old", 1, 1));
	EXPECT_EQ(0, check_file(MNT "/log/d", 1, 7));
	EXPECT_EQ(0, check_file(MNT "/log/e", 1, 1));
	ASSERT_EQ(0, umount(MNT));
	self->mounted = false;
	EXPECT_EQ(0, run(variant->fs->fsck, self->dev));
}

static int write_in_cgroup(void *path)
{
	return write_file(path, 1, strstr(path, "/d/") ? 5 : 4, true, 0, 0);
}

/*
 * The order: the stream of one write, the file's ID, the directory's, the
 * cgroup's.
 */
TEST_F(dir, order)
{
	struct stats st;

	ASSERT_EQ(0, mkdir(MNT "/d", 0755));
	ASSERT_EQ(0, dir_set(MNT "/d", 5));
	ASSERT_EQ(0, cg_setup());
	ASSERT_EQ(0, cg_make("dir_test", 4));
	ASSERT_EQ(0, write_attr(self->dir, "stream_stats", "0"));
	EXPECT_EQ(0, write_file(MNT "/d/uring", 1, 2, true, 6, 2));
	EXPECT_EQ(0, write_file(MNT "/d/file", 1, 6, true, 6, 0));
	EXPECT_EQ(0, write_file(MNT "/d/dir", 1, 5, true, 0, 0));
	EXPECT_EQ(0, cg_run("dir_test", write_in_cgroup, MNT "/d/cgroup"));
	EXPECT_EQ(0, cg_run("dir_test", write_in_cgroup, MNT "/cgroup"));
	EXPECT_EQ(0, cg_remove("dir_test"));
	ASSERT_EQ(0, read_stats(self->dir, &st));
	/*
	 * btrfs writes direct writes to files with checksums through the
	 * page cache, where the stream of one write does not go: the
	 * file's ID.
	 */
	if (strcmp(variant->fs->name, "btrfs")) {
		EXPECT_EQ(MIB_SECTORS, st.sectors[2]);
		EXPECT_EQ(MIB_SECTORS, st.sectors[6]);
	} else {
		EXPECT_EQ(0, st.sectors[2]);
		EXPECT_EQ(2 * MIB_SECTORS, st.sectors[6]);
	}
	EXPECT_EQ(2 * MIB_SECTORS, st.sectors[5]);
	EXPECT_EQ(MIB_SECTORS, st.sectors[4]);
	EXPECT_EQ(-1, only(&st, (const int []){ 0, 2, 4, 5, 6, -1 }));
}

/*
 * Only the owner or CAP_FOWNER; 0 to 255; an immutable directory and a
 * read-only mount refuse.
 */
TEST_F(dir, errors)
{
	int status;
	pid_t pid;

	ASSERT_EQ(0, mkdir(MNT "/d", 0777));
	EXPECT_EQ(EINVAL, dir_set(MNT "/d", 256));
	EXPECT_EQ(EINVAL, dir_set(MNT "/d", -1));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		if (setresgid(65534, 65534, 65534) ||
		    setresuid(65534, 65534, 65534))
			_exit(2);
		_exit(dir_set(MNT "/d", 3) == EPERM ? 0 : 1);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	EXPECT_EQ(0, dir_get(MNT "/d"));
	ASSERT_EQ(0, run("%s", "chattr +i " MNT "/d"));
	EXPECT_EQ(EPERM, dir_set(MNT "/d", 3));
	ASSERT_EQ(0, run("%s", "chattr -i " MNT "/d"));
	ASSERT_EQ(0, mount(NULL, MNT, NULL, MS_REMOUNT | MS_RDONLY, NULL));
	EXPECT_EQ(EROFS, dir_set(MNT "/d", 3));
	ASSERT_EQ(0, mount(NULL, MNT, NULL, MS_REMOUNT, NULL));
	EXPECT_EQ(0, dir_get(MNT "/d"));
}

FIXTURE(ovl) {
	char dir[256];
	char dev[128];
	bool mounted;
};

FIXTURE_SETUP(ovl)
{
	fs_up(_metadata, &fs_ext4, self->dir, sizeof(self->dir), self->dev,
	      sizeof(self->dev), &self->mounted);
}

FIXTURE_TEARDOWN(ovl)
{
	umount(MNT "/ovl");
	fs_down(self->dir, self->mounted);
}

/*
 * overlayfs on ext4: the ID of an overlay directory goes to its upper
 * directory, and the files created through the overlay take it.
 */
TEST_F(ovl, upper_dir)
{
	char buf[8] = { 0 };
	struct stats st;

	ASSERT_EQ(0, mkdir(MNT "/lower", 0755));
	ASSERT_EQ(0, mkdir(MNT "/lower/d", 0755));
	ASSERT_EQ(0, write_file(MNT "/lower/d/w", 1, 1, false, 0, 0));
	ASSERT_EQ(0, mkdir(MNT "/upper", 0755));
	ASSERT_EQ(0, mkdir(MNT "/work", 0755));
	ASSERT_EQ(0, mkdir(MNT "/ovl", 0755));
	ASSERT_EQ(0, mount("overlay", MNT "/ovl", "overlay", 0,
			   OVL_OPTS));
	EXPECT_EQ(0, dir_set(MNT "/ovl/d", 3));
	EXPECT_EQ(3, dir_get(MNT "/ovl/d"));
	EXPECT_EQ(1, getxattr(MNT "/upper/d", NAME, buf, sizeof(buf)));
	EXPECT_STREQ("3", buf);
	ASSERT_EQ(0, write_attr(self->dir, "stream_stats", "0"));
	EXPECT_EQ(0, write_file(MNT "/ovl/d/f", 2, 3, false, 0, 0));
	EXPECT_EQ(0, write_file(MNT "/ovl/d/g", 1, 3, true, 0, 0));
	/* Made anew over the whiteout of a lower file, then moved in place. */
	ASSERT_EQ(0, unlink(MNT "/ovl/d/w"));
	EXPECT_EQ(0, write_file(MNT "/ovl/d/w", 1, 3, false, 0, 0));
	EXPECT_EQ(0, umount(MNT "/ovl"));
	sync();
	ASSERT_EQ(0, read_stats(self->dir, &st));
	EXPECT_EQ(4 * MIB_SECTORS, st.sectors[3]);
	EXPECT_EQ(-1, only(&st, (const int []){ 0, 3, -1 }));
	EXPECT_EQ(0, check_file(MNT "/upper/d/f", 2, 3));
	EXPECT_EQ(0, check_file(MNT "/upper/d/g", 1, 3));
	EXPECT_EQ(0, check_file(MNT "/upper/d/w", 1, 3));
}

/* tmpfs writes to no device: it refuses the ID of a directory. */
TEST(tmpfs)
{
	mkdir(MNT "-tmpfs", 0755);
	ASSERT_EQ(0, mount("tmpfs", MNT "-tmpfs", "tmpfs", 0, NULL));
	EXPECT_EQ(EOPNOTSUPP, dir_set(MNT "-tmpfs", 3));
	EXPECT_EQ(0, dir_get(MNT "-tmpfs"));
	EXPECT_EQ(0, umount(MNT "-tmpfs"));
}

TEST_HARNESS_MAIN
