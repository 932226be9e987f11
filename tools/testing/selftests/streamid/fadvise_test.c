// SPDX-License-Identifier: GPL-2.0
/*
 * POSIX_FADV_STREAMID as user space sees it: which IDs and files it takes,
 * who may set an ID, which errors it gives, how a program tells that the
 * kernel knows it, and that a failed call changes nothing, as
 * /proc/self/fdinfo shows.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "streamid.h"

FIXTURE(file) {
	char path[64];
	int fd;
};

FIXTURE_SETUP(file)
{
	snprintf(self->path, sizeof(self->path), "/tmp/fadvise_test.%d",
		 getpid());
	self->fd = open(self->path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	ASSERT_LE(0, self->fd);
}

FIXTURE_TEARDOWN(file)
{
	close(self->fd);
	unlink(self->path);
}

TEST_F(file, boundaries)
{
	static const struct {
		long long id;
		int err;	/* 0: the ID is set */
	} cases[] = {
		{ 1, 0 }, { 255, 0 }, { 256, EINVAL }, { -1, EINVAL },
		{ (1LL << 32) + 1, EINVAL }, { 0, 0 }, { 7, 0 },
		{ 1LL << 40, EINVAL },
	};
	int i, want = 0;

	EXPECT_EQ(0, fdinfo_streamid(self->fd));
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		EXPECT_EQ(cases[i].err, posix_fadvise(self->fd, cases[i].id,
						      0, POSIX_FADV_STREAMID))
			TH_LOG("id %lld", cases[i].id);
		if (!cases[i].err)
			want = cases[i].id;
		/* A failed call leaves the ID as it was. */
		EXPECT_EQ(want, fdinfo_streamid(self->fd))
			TH_LOG("after id %lld", cases[i].id);
	}
}

/*
 * len is ignored, as fio passes the file size there, but must not be
 * negative, as for all advice.
 */
TEST_F(file, len)
{
	EXPECT_EQ(0, posix_fadvise(self->fd, 3, 1 << 20, POSIX_FADV_STREAMID));
	EXPECT_EQ(3, fdinfo_streamid(self->fd));
	EXPECT_EQ(EINVAL, posix_fadvise(self->fd, 4, -1, POSIX_FADV_STREAMID));
	EXPECT_EQ(3, fdinfo_streamid(self->fd));
}

/*
 * How a program tells whether the kernel knows the advice: clearing the
 * ID of a file open for writing succeeds and changes nothing; an older
 * kernel says EINVAL, as it does to any advice it does not know.
 */
TEST_F(file, probe)
{
	EXPECT_EQ(0, posix_fadvise(self->fd, 0, 0, POSIX_FADV_STREAMID));
	EXPECT_EQ(0, fdinfo_streamid(self->fd));
	EXPECT_EQ(0, posix_fadvise(self->fd, 9, 0, POSIX_FADV_STREAMID));
	EXPECT_EQ(0, posix_fadvise(self->fd, 0, 0, POSIX_FADV_STREAMID));
	EXPECT_EQ(0, fdinfo_streamid(self->fd));
	/* What an older kernel says: the answer to advice it does not know. */
	EXPECT_EQ(EINVAL, posix_fadvise(self->fd, 0, 0, 9));
}

/*
 * Open @path for writing as user and group @id, with no capability left,
 * and give it @stream: what posix_fadvise() returned, 100 if the set-up
 * failed.
 */
static int fadvise_as(const char *path, uid_t id, int stream)
{
	int status, fd;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		return 100;
	if (!pid) {
		if (setresgid(id, id, id) || setresuid(id, id, id))
			_exit(100);
		fd = open(path, O_WRONLY);
		if (fd < 0)
			_exit(100);
		status = posix_fadvise(fd, stream, 0, POSIX_FADV_STREAMID);
		/* A refused call sets nothing. */
		if (fdinfo_streamid(fd) != (status ? 0 : stream))
			_exit(100);
		_exit(status);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return 100;
	return WEXITSTATUS(status);
}

/*
 * As for F_SET_RW_HINT, the owner of the file sets its ID, or a process
 * with CAP_FOWNER: another writer gets EPERM.
 */
TEST_F(file, owner_only)
{
	if (geteuid())
		SKIP(return, "not root: no other user to be");
	ASSERT_EQ(0, chmod(self->path, 0666));
	EXPECT_EQ(EPERM, fadvise_as(self->path, 65534, 5));
	ASSERT_EQ(0, chown(self->path, 65534, 65534));
	EXPECT_EQ(0, fadvise_as(self->path, 65534, 5));
	/* Root does not own the file now, but has CAP_FOWNER. */
	EXPECT_EQ(0, posix_fadvise(self->fd, 6, 0, POSIX_FADV_STREAMID));
	EXPECT_EQ(6, fdinfo_streamid(self->fd));
}

/* Each open file has its own ID. */
TEST_F(file, per_open_file)
{
	int fd2 = open(self->path, O_WRONLY);

	ASSERT_LE(0, fd2);
	EXPECT_EQ(0, posix_fadvise(self->fd, 10, 0, POSIX_FADV_STREAMID));
	EXPECT_EQ(0, posix_fadvise(fd2, 20, 0, POSIX_FADV_STREAMID));
	EXPECT_EQ(10, fdinfo_streamid(self->fd));
	EXPECT_EQ(20, fdinfo_streamid(fd2));
	close(fd2);
}

/* F_SETFL recomputes the file's I/O flags: the ID stays. */
TEST_F(file, survives_setfl)
{
	EXPECT_EQ(0, posix_fadvise(self->fd, 42, 0, POSIX_FADV_STREAMID));
	ASSERT_EQ(0, fcntl(self->fd, F_SETFL, O_APPEND));
	EXPECT_EQ(42, fdinfo_streamid(self->fd));
	ASSERT_EQ(0, fcntl(self->fd, F_SETFL, 0));
	EXPECT_EQ(42, fdinfo_streamid(self->fd));
}

/* A reader must not decide where a writer's data goes. */
TEST_F(file, read_only_fd)
{
	int ro = open(self->path, O_RDONLY);

	ASSERT_LE(0, ro);
	EXPECT_EQ(EINVAL, posix_fadvise(ro, 5, 0, POSIX_FADV_STREAMID));
	EXPECT_EQ(0, fdinfo_streamid(ro));
	close(ro);
}

TEST_F(file, o_path_fd)
{
	int fd = open(self->path, O_PATH);

	ASSERT_LE(0, fd);
	EXPECT_EQ(EBADF, posix_fadvise(fd, 5, 0, POSIX_FADV_STREAMID));
	close(fd);
}

TEST(bad_fd)
{
	int fd = open("/dev/null", O_WRONLY);

	ASSERT_LE(0, fd);
	close(fd);
	EXPECT_EQ(EBADF, posix_fadvise(fd, 5, 0, POSIX_FADV_STREAMID));
	EXPECT_EQ(EBADF, posix_fadvise(-1, 5, 0, POSIX_FADV_STREAMID));
}

TEST(pipe_fd)
{
	int p[2];

	ASSERT_EQ(0, pipe(p));
	EXPECT_EQ(ESPIPE, posix_fadvise(p[1], 5, 0, POSIX_FADV_STREAMID));
	EXPECT_EQ(0, fdinfo_streamid(p[1]));
	close(p[0]);
	close(p[1]);
}

TEST(fifo_fd)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/tmp/fadvise_fifo.%d", getpid());
	ASSERT_EQ(0, mkfifo(path, 0600));
	fd = open(path, O_RDWR);
	ASSERT_LE(0, fd);
	EXPECT_EQ(ESPIPE, posix_fadvise(fd, 5, 0, POSIX_FADV_STREAMID));
	close(fd);
	unlink(path);
}

/* Not a regular file or a block device: /dev/null is a character device. */
TEST(char_device)
{
	int fd = open("/dev/null", O_WRONLY);

	ASSERT_LE(0, fd);
	EXPECT_EQ(EINVAL, posix_fadvise(fd, 5, 0, POSIX_FADV_STREAMID));
	EXPECT_EQ(0, fdinfo_streamid(fd));
	close(fd);
}

/* Python's os.posix_fadvise() works unchanged. */
TEST_F(file, python)
{
	char cmd[512];

	if (system("command -v python3 >/dev/null"))
		SKIP(return, "no python3");
	snprintf(cmd, sizeof(cmd), "python3 -c '%s%s%s%s' | grep -qx '%s'",
		 "import os; fd = os.open(\"", self->path,
		 "\", os.O_WRONLY); os.posix_fadvise(fd, 77, 0, 8); ",
		 "print(open(\"/proc/self/fdinfo/%d\" % fd).read())",
		 "streamid:.77");
	EXPECT_EQ(0, system(cmd));
}

TEST_HARNESS_MAIN
