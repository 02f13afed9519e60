/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The file system: a root directory with 'disk' (the modelled device, fixed
 * size, direct_io) and 'stats' (a JSON snapshot per open).
 */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "flashsim.h"

#define INO_DISK 2
#define INO_STATS 3
#define NAME_DISK "disk"
#define NAME_STATS "stats"
/* Nothing here ever changes behind the kernel's back. */
#define ATTR_TIMEOUT 3600.0

struct snapshot {
	char *buf;
	size_t len;
};

static struct flashsim *fs_of(fuse_req_t req)
{
	return fuse_req_userdata(req);
}

static void fill_attr(const struct flashsim *fs, fuse_ino_t ino, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = ino;
	st->st_uid = getuid();
	st->st_gid = getgid();
	st->st_blksize = MODEL_PAGE_SIZE;
	st->st_atime = st->st_mtime = st->st_ctime = fs->mounted_at;
	switch (ino) {
	case FUSE_ROOT_ID:
		st->st_mode = S_IFDIR | 0755;
		st->st_nlink = 2;
		break;
	case INO_DISK:
		st->st_mode = S_IFREG | 0644;
		st->st_nlink = 1;
		st->st_size = (off_t) fs->cfg.model.size;
		st->st_blocks = (blkcnt_t) (fs->cfg.model.size / 512);
		break;
	default:
		/* Size unknown until opened; read with direct_io until EOF. */
		st->st_mode = S_IFREG | 0444;
		st->st_nlink = 1;
		break;
	}
}

static void fs_init(void *userdata, struct fuse_conn_info *conn)
{
	struct flashsim *fs = userdata;

	/*
	 * The default of 12 background requests blocks the loop worker long
	 * before the device model is saturated.
	 */
	conn->max_background = fs->cfg.max_background;
	conn->congestion_threshold = fs->cfg.max_background * 3 / 4;
	/* Let the loop driver keep many direct I/Os in flight. */
	if (conn->capable & FUSE_CAP_ASYNC_DIO)
		conn->want |= FUSE_CAP_ASYNC_DIO;
	/* The size is fixed: O_TRUNC must arrive as a setattr we can refuse. */
	conn->want &= ~FUSE_CAP_ATOMIC_O_TRUNC;
}

static void fs_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fuse_entry_param e = {};

	if (parent != FUSE_ROOT_ID) {
		fuse_reply_err(req, ENOTDIR);
		return;
	}
	if (strcmp(name, NAME_DISK) == 0)
		e.ino = INO_DISK;
	else if (strcmp(name, NAME_STATS) == 0)
		e.ino = INO_STATS;
	else {
		fuse_reply_err(req, ENOENT);
		return;
	}
	e.attr_timeout = ATTR_TIMEOUT;
	e.entry_timeout = ATTR_TIMEOUT;
	fill_attr(fs_of(req), e.ino, &e.attr);
	fuse_reply_entry(req, &e);
}

static void fs_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct stat st;

	fill_attr(fs_of(req), ino, &st);
	fuse_reply_attr(req, &st, ATTR_TIMEOUT);
}

static void fs_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
		       struct fuse_file_info *fi)
{
	struct flashsim *fs = fs_of(req);
	struct stat st;

	/* A device does not change size; other attributes are ignored. */
	if ((to_set & FUSE_SET_ATTR_SIZE) &&
	    (ino != INO_DISK || (uint64_t) attr->st_size != fs->cfg.model.size)) {
		fuse_reply_err(req, EPERM);
		return;
	}
	fill_attr(fs, ino, &st);
	fuse_reply_attr(req, &st, ATTR_TIMEOUT);
}

static int snapshot_stats(struct flashsim *fs, struct snapshot *snap)
{
	FILE *f;

	f = open_memstream(&snap->buf, &snap->len);
	if (!f)
		return -errno;
	stats_write_json(&fs->stats, &fs->model, now_ns(), f);
	if (fclose(f) != 0)
		return -errno;
	return 0;
}

static void fs_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct snapshot *snap;
	int r;

	/* Bypass the page cache: every request reaches the model. */
	fi->direct_io = 1;
	if (ino == INO_DISK) {
		fuse_reply_open(req, fi);
		return;
	}
	if (ino != INO_STATS) {
		fuse_reply_err(req, EISDIR);
		return;
	}
	if ((fi->flags & O_ACCMODE) != O_RDONLY) {
		fuse_reply_err(req, EACCES);
		return;
	}
	/* One consistent snapshot per open, however the reader splits reads. */
	snap = calloc(1, sizeof(*snap));
	if (!snap) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	r = snapshot_stats(fs_of(req), snap);
	if (r < 0) {
		free(snap->buf);
		free(snap);
		fuse_reply_err(req, -r);
		return;
	}
	fi->fh = (uint64_t) (uintptr_t) snap;
	if (fuse_reply_open(req, fi) < 0) {
		free(snap->buf);
		free(snap);
	}
}

static void fs_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	if (ino == INO_STATS) {
		struct snapshot *snap = (struct snapshot *) (uintptr_t) fi->fh;

		free(snap->buf);
		free(snap);
	}
	fuse_reply_err(req, 0);
}

/* Clamps [off, off+len) to [0, limit); returns the clamped length. */
static size_t clamp_len(uint64_t off, size_t len, uint64_t limit)
{
	if (off >= limit)
		return 0;
	return len > limit - off ? (size_t) (limit - off) : len;
}

static void fs_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	struct flashsim *fs = fs_of(req);

	if (off < 0) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	if (ino == INO_STATS) {
		struct snapshot *snap = (struct snapshot *) (uintptr_t) fi->fh;
		size_t n = clamp_len((uint64_t) off, size, snap->len);

		fuse_reply_buf(req, n ? snap->buf + off : NULL, n);
		return;
	}
	flashsim_submit(fs, req, MODEL_READ, (uint64_t) off,
	       clamp_len((uint64_t) off, size, fs->cfg.model.size));
}

static void fs_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size,
		     off_t off, struct fuse_file_info *fi)
{
	struct flashsim *fs = fs_of(req);
	size_t n;

	if (ino != INO_DISK) {
		fuse_reply_err(req, EBADF);
		return;
	}
	if (off < 0) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	/* Past the end of a fixed-size device: no space, like a block device. */
	n = clamp_len((uint64_t) off, size, fs->cfg.model.size);
	if (n == 0 && size > 0) {
		stats_error(&fs->stats, MODEL_WRITE);
		fuse_reply_err(req, ENOSPC);
		return;
	}
	/* The data lands at once; only the acknowledgement is delayed. */
	memcpy(fs->data + off, buf, n);
	flashsim_submit(fs, req, MODEL_WRITE, (uint64_t) off, n);
}

static void fs_fsync(fuse_req_t req, fuse_ino_t ino, int datasync,
		     struct fuse_file_info *fi)
{
	if (ino != INO_DISK) {
		fuse_reply_err(req, 0);
		return;
	}
	flashsim_submit(fs_of(req), req, MODEL_FSYNC, 0, 0);
}

static void fs_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	/* close(2): nothing to write back, durability is fsync's business. */
	fuse_reply_err(req, 0);
}

static void fs_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	if (ino != FUSE_ROOT_ID)
		fuse_reply_err(req, ENOTDIR);
	else
		fuse_reply_open(req, fi);
}

static void fs_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	static const struct { const char *name; fuse_ino_t ino; } entries[] = {
		{ ".", FUSE_ROOT_ID }, { "..", FUSE_ROOT_ID },
		{ NAME_DISK, INO_DISK }, { NAME_STATS, INO_STATS },
	};
	struct flashsim *fs = fs_of(req);
	char buf[512];
	size_t used = 0;

	for (off_t i = off; i < (off_t) (sizeof(entries) / sizeof(entries[0])); i++) {
		struct stat st;
		size_t need;

		fill_attr(fs, entries[i].ino, &st);
		need = fuse_add_direntry(req, buf + used, sizeof(buf) - used,
					 entries[i].name, &st, i + 1);
		if (need > sizeof(buf) - used || used + need > size)
			break;
		used += need;
	}
	fuse_reply_buf(req, buf, used);
}

static void fs_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct flashsim *fs = fs_of(req);
	struct statvfs sv = {
		.f_bsize = MODEL_PAGE_SIZE,
		.f_frsize = MODEL_PAGE_SIZE,
		.f_blocks = fs->cfg.model.size / MODEL_PAGE_SIZE,
		.f_files = 3,
		.f_namemax = 255,
	};

	fuse_reply_statfs(req, &sv);
}

const struct fuse_lowlevel_ops flashsim_ops = {
	.init = fs_init,
	.lookup = fs_lookup,
	.getattr = fs_getattr,
	.setattr = fs_setattr,
	.open = fs_open,
	.release = fs_release,
	.read = fs_read,
	.write = fs_write,
	.fsync = fs_fsync,
	.flush = fs_flush,
	.opendir = fs_opendir,
	.readdir = fs_readdir,
	.statfs = fs_statfs,
};
