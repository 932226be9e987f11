// SPDX-License-Identifier: GPL-2.0
/*
 * The write stream ID of a directory: given to the files and directories
 * created in it, and kept with them on disk.
 *
 * The administrator who knows that a database's log directory holds
 * short-lived data and its table directory long-lived data places them
 * without changing the database: posix_fadvise(dirfd, id, 0,
 * POSIX_FADV_STREAMID) on the directory.  The ID is kept in the extended
 * attribute "trusted.streamid" (the decimal ID), so that it lasts across
 * unmount and reboot on every file system with extended attributes, and
 * goes with the file through backup tools that copy them; only the owner
 * or CAP_FOWNER sets it this way, and only CAP_SYS_ADMIN by setxattr().
 * A file created in the directory gets the attribute too, once, when it is
 * created: a later change of the directory's ID does not re-tag it.
 *
 * The data of a file takes this ID when neither the program nor the file
 * chose one (inode_dir_streamid()).  The inode keeps it in memory, read
 * once when the file is first opened for writing.  Only file systems on
 * block devices read it, and those stacked on them (overlayfs, which pass
 * it on to and from the file underneath), so that network file systems
 * pay no round trip at open.
 */

#include <linux/fs.h>
#include <linux/fsnotify.h>
#include <linux/mount.h>
#include <linux/namei.h>
#include <linux/security.h>
#include <linux/xattr.h>

/* The ID as the attribute keeps it: 1 to 255 in decimal, without NUL. */
static u8 streamid_parse(const void *value, size_t size)
{
	char buf[4];
	u8 id;

	if (!value || !size || size >= sizeof(buf))
		return 0;
	memcpy(buf, value, size);
	buf[size] = '\0';
	if (kstrtou8(buf, 10, &id))
		return 0;
	return id;
}

/*
 * Keep @id in @inode: what the attribute now holds (@known) or what it held
 * when it was read, which must not replace what a setxattr() that raced with
 * the read stored.
 */
static void inode_cache_dir_streamid(struct inode *inode, u8 id, bool known)
{
	spin_lock(&inode->i_lock);
	if (known || !(inode->i_dir_streamid & I_DIR_STREAMID_KNOWN))
		WRITE_ONCE(inode->i_dir_streamid, I_DIR_STREAMID_KNOWN | id);
	spin_unlock(&inode->i_lock);
}

/* Whether the file system writes to block devices, itself or below. */
static bool sb_has_dir_streamid(struct super_block *sb)
{
	return (sb->s_type->fs_flags & FS_REQUIRES_DEV) || sb->s_stack_depth;
}

/**
 * dentry_load_dir_streamid - read the directory's stream ID of an inode
 * @dentry: the file or directory
 *
 * Reads the ID from the inode's extended attribute the first time, and
 * keeps it in the inode.  May sleep.
 *
 * Return: the ID, 0 for none.
 */
u8 dentry_load_dir_streamid(struct dentry *dentry)
{
	struct inode *inode = d_inode(dentry);
	char buf[4];
	ssize_t n;
	u16 v = READ_ONCE(inode->i_dir_streamid);

	if (v & I_DIR_STREAMID_KNOWN)
		return v & 0xff;
	if (!sb_has_dir_streamid(inode->i_sb) ||
	    !(inode->i_opflags & IOP_XATTR)) {
		inode_cache_dir_streamid(inode, 0, false);
		return 0;
	}
	n = __vfs_getxattr(dentry, inode, XATTR_NAME_STREAMID, buf,
			   sizeof(buf));
	/*
	 * Not yet known after an error the next open may not meet; a value
	 * too long for an ID is none.
	 */
	if (n < 0 && n != -ENODATA && n != -EOPNOTSUPP && n != -ERANGE)
		return 0;
	inode_cache_dir_streamid(inode, n > 0 ? streamid_parse(buf, n) : 0,
				 false);
	return READ_ONCE(inode->i_dir_streamid) & 0xff;
}

/*
 * setxattr() or removexattr() changed @name of @inode: if it is the stream
 * ID, the inode now has @value (NULL when removed).
 */
void inode_xattr_streamid_changed(struct inode *inode, const char *name,
				  const void *value, size_t size)
{
	if (sb_has_dir_streamid(inode->i_sb) &&
	    !strcmp(name, XATTR_NAME_STREAMID))
		inode_cache_dir_streamid(inode, streamid_parse(value, size),
					 true);
}

/**
 * dir_set_streamid - set the stream ID of a directory (POSIX_FADV_STREAMID)
 * @file: the open directory
 * @id: the ID, 1 to 255, or 0 to remove it
 *
 * The caller checked that the caller owns the directory or has CAP_FOWNER.
 *
 * Return: 0, -EOPNOTSUPP if the file system keeps no such ID or no
 * extended attributes, -EROFS if it is read-only, or another error of
 * setting the attribute.
 */
int dir_set_streamid(struct file *file, u8 id)
{
	struct dentry *dentry = file->f_path.dentry;
	struct inode *inode = d_inode(dentry);
	struct mnt_idmap *idmap = file_mnt_idmap(file);
	char buf[4];
	size_t len = snprintf(buf, sizeof(buf), "%u", id);
	int ret;

	if (!sb_has_dir_streamid(inode->i_sb))
		return -EOPNOTSUPP;
	ret = mnt_want_write_file(file);
	if (ret)
		return ret;
	inode_lock(inode);
	/* As setxattr() and removexattr() would, but for CAP_SYS_ADMIN. */
	if (IS_IMMUTABLE(inode) || IS_APPEND(inode)) {
		ret = -EPERM;
	} else if (id) {
		ret = security_inode_setxattr(idmap, dentry,
					      XATTR_NAME_STREAMID, buf, len, 0);
		if (!ret)
			ret = __vfs_setxattr_noperm(idmap, dentry,
						    XATTR_NAME_STREAMID, buf,
						    len, 0);
	} else {
		ret = security_inode_removexattr(idmap, dentry,
						 XATTR_NAME_STREAMID);
		if (!ret)
			ret = __vfs_removexattr(idmap, dentry,
						XATTR_NAME_STREAMID);
		if (ret == -ENODATA) {
			ret = 0;
		} else if (!ret) {
			fsnotify_xattr(dentry);
			security_inode_post_removexattr(dentry,
							XATTR_NAME_STREAMID);
		}
	}
	inode_unlock(inode);
	mnt_drop_write_file(file);
	return ret;
}

/**
 * inherit_dir_streamid - give a new file the stream ID of its directory
 * @idmap: idmap of the mount the file is created on
 * @dir: the directory
 * @dentry: the new file or directory
 *
 * Called when a regular file or a directory has been created in @dir, before
 * anyone is told of it.  A failure to set the attribute leaves the new file
 * without an ID: a file is never refused because of its stream.  On a
 * stacked file system (overlayfs) the file underneath may have the ID
 * already, from its own directory; only a file that does not, created
 * elsewhere and moved into place, gets it here.
 */
void inherit_dir_streamid(struct mnt_idmap *idmap, struct inode *dir,
			  struct dentry *dentry)
{
	struct inode *inode = d_inode(dentry);
	char buf[4];
	u8 id;

	if (!inode || (!S_ISREG(inode->i_mode) && !S_ISDIR(inode->i_mode)) ||
	    !sb_has_dir_streamid(dir->i_sb))
		return;
	id = dentry_load_dir_streamid(dentry->d_parent);
	/* A new file has no attribute of its own yet. */
	if (!id && !dir->i_sb->s_stack_depth)
		inode_cache_dir_streamid(inode, 0, false);
	if (!id || (dir->i_sb->s_stack_depth &&
		    dentry_load_dir_streamid(dentry) == id))
		return;
	inode_lock_nested(inode, I_MUTEX_CHILD);
	__vfs_setxattr_noperm(idmap, dentry, XATTR_NAME_STREAMID, buf,
			      snprintf(buf, sizeof(buf), "%u", id), 0);
	inode_unlock(inode);
}
