/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cgroup v2 for the stream ID selftests: make a cgroup with an io.stream,
 * and run a function in a process of a cgroup.
 */
#ifndef STREAMID_CGROUP_H
#define STREAMID_CGROUP_H

#include <errno.h>
#include <sys/mount.h>
#include <sys/vfs.h>
#include <sys/wait.h>

#include "streamid.h"

#define CG_ROOT		"/sys/fs/cgroup"
#define CG2_MAGIC	0x63677270

/*
 * cgroup v2 mounted on CG_ROOT, with the io and memory controllers (the
 * memory controller for cgroup writeback) given to its children.
 */
static inline int cg_setup(void)
{
	struct statfs sf;

	if ((statfs(CG_ROOT, &sf) || sf.f_type != CG2_MAGIC) &&
	    mount("cgroup2", CG_ROOT, "cgroup2", 0, NULL))
		return -1;
	return write_attr(CG_ROOT, "cgroup.subtree_control", "+io +memory");
}

/* Make the cgroup @path under CG_ROOT, with io.stream @stream. */
static inline int cg_make(const char *path, int stream)
{
	char dir[256], val[16];

	snprintf(dir, sizeof(dir), CG_ROOT "/%s", path);
	if (mkdir(dir, 0755) && errno != EEXIST)
		return -1;
	snprintf(val, sizeof(val), "%d", stream);
	return write_attr(dir, "io.stream", val);
}

/*
 * Give the io and memory controllers of the cgroup @path to its children:
 * it can then hold no process itself.
 */
static inline int cg_delegate(const char *path)
{
	char dir[256];

	snprintf(dir, sizeof(dir), CG_ROOT "/%s", path);
	return write_attr(dir, "cgroup.subtree_control", "+io +memory");
}

/* Remove the cgroup @path, which has no process left. */
static inline int cg_remove(const char *path)
{
	char dir[256];

	snprintf(dir, sizeof(dir), CG_ROOT "/%s", path);
	return rmdir(dir);
}

/* Move the calling process into the cgroup @path. */
static inline int cg_enter(const char *path)
{
	char dir[256];

	snprintf(dir, sizeof(dir), CG_ROOT "/%s", path);
	return write_attr(dir, "cgroup.procs", "0");
}

/*
 * Run @fn(@arg) in a new process in the cgroup @path; 0 if it returned
 * 0.  The process is gone when this returns, so that the cgroup can be
 * removed.
 */
static inline int cg_run(const char *path, int (*fn)(void *), void *arg)
{
	int status;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid)
		_exit(cg_enter(path) || fn(arg) ? 1 : 0);
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) && !WEXITSTATUS(status) ? 0 : -1;
}

#endif /* STREAMID_CGROUP_H */
