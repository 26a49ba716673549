// SPDX-License-Identifier: GPL-2.0-only
/*
 * bpfstash decode --archive DIR: the entries bpfstash-gc archived, as a
 * stash.  bpfstash-gc(8) writes each expired entry to DIR/xx/HASH.tar.zst,
 * a tar of HASH/ with the entry's binary files and HASH.debug.  The binary
 * files of every archive are extracted into a private directory, which
 * libbpfstash then opens as any copied stash; it is removed at the end.
 *
 * Archives are untrusted input: a member is taken only if it is a regular
 * file named HASH/FILE, with HASH the archive's own name and FILE one of
 * an entry's binary files, and no larger than the library would read.
 * Anything else in an archive is skipped; an archive that cannot be read
 * is reported and skipped, and the others are still used.  libbpfstash
 * checks every entry again when it loads it.
 */
#define _GNU_SOURCE
#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "main.h"
#include "decode.h"

#define ARCHIVE_SUFFIX ".tar.zst"
/* The largest file of an entry that decode extracts (BTF is the largest). */
#define ARCHIVE_FILE_MAX (64u << 20)
/* All the files it extracts, unless $BPFSTASH_DECODE_ARCHIVE_MAX says. */
#define ARCHIVE_TOTAL_MAX (1ull << 30)

static bool entry_file(const char *name)
{
	unsigned int i;

	/* "calls": an image's, only in its entry (libbpfstash checks that) */
	if (!strcmp(name, "meta") || !strcmp(name, "funcs") || !strcmp(name, "calls") ||
	    !strcmp(name, "pokes"))
		return true;
	for (i = 0; i < BPFSTASH_NR_BLOB_FILES; i++)
		if (!strcmp(name, bpfstash_blob_file(i)))
			return true;
	return false;
}

/*
 * Copy the member @a is at into @fd, at most ARCHIVE_FILE_MAX bytes, and
 * at most *@left: -ENOSPC past it.
 */
static int extract_member(struct archive *a, int fd, uint64_t *left)
{
	char buf[1 << 16];
	uint64_t total = 0;
	la_ssize_t n;

	while ((n = archive_read_data(a, buf, sizeof(buf))) > 0) {
		total += n;
		if (total > ARCHIVE_FILE_MAX)
			return -EFBIG;
		if ((uint64_t)n > *left)
			return -ENOSPC;
		*left -= n;
		if (write(fd, buf, n) != n)
			return -errno ?: -EIO;
	}
	return n < 0 ? -EIO : 0;
}

/*
 * Extract the binary files of archive @path, named @hash, into @out/@hash.
 * Returns the number of files extracted, or a negative errno with @why
 * (@why_size bytes) set.
 */
static int extract_archive(const char *path, const char *hash, int out_fd, uint64_t *left,
			   char *why, size_t why_size)
{
	const char *msg = NULL;
	struct archive_entry *ae;
	struct archive *a;
	int dfd = -1, nr = 0, err = 0, r;

	why[0] = '\0';
	a = archive_read_new();
	if (!a)
		return -ENOMEM;
	archive_read_support_filter_zstd(a);
	archive_read_support_format_tar(a);
	if (archive_read_open_filename(a, path, 1 << 16) != ARCHIVE_OK) {
		msg = archive_error_string(a);
		err = -EINVAL;
		goto out;
	}
	while ((r = archive_read_next_header(a, &ae)) == ARCHIVE_OK) {
		const char *p = archive_entry_pathname(ae), *file;
		int fd;

		if (!p || strncmp(p, hash, BPFSTASH_HEX_LEN) || p[BPFSTASH_HEX_LEN] != '/')
			continue;	/* HASH.debug, or not ours */
		file = p + BPFSTASH_HEX_LEN + 1;
		if (!entry_file(file) || archive_entry_filetype(ae) != AE_IFREG)
			continue;
		if (dfd < 0) {
			if (mkdirat(out_fd, hash, 0700) && errno != EEXIST) {
				err = -errno;
				goto out;
			}
			dfd = openat(out_fd, hash, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
			if (dfd < 0) {
				err = -errno;
				goto out;
			}
		}
		fd = openat(dfd, file, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0600);
		if (fd < 0) {
			err = -errno;	/* twice in one archive: EEXIST */
			msg = "a file of the entry twice, or not writable";
			goto out;
		}
		err = extract_member(a, fd, left);
		if (close(fd) && !err)
			err = -errno;
		if (err) {
			msg = err == -EFBIG ? "a file larger than an entry's" :
			      err == -ENOSPC ? "the limit of what decode extracts" :
			      archive_error_string(a);
			goto out;
		}
		nr++;
	}
	if (r != ARCHIVE_EOF) {
		msg = archive_error_string(a);
		err = -EINVAL;
	}
out:
	if (dfd >= 0)
		close(dfd);
	/* The message lives in @a. */
	snprintf(why, why_size, "%s", msg ? msg : err ? strerror(-err) : "");
	archive_read_free(a);
	return err ?: nr;
}

/* Remove @hash's directory under @out_fd and what it holds. */
static void remove_entry_dir(int out_fd, const char *hash)
{
	struct dirent *de;
	DIR *d;
	int fd;

	fd = openat(out_fd, hash, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
	d = fd >= 0 ? fdopendir(fd) : NULL;
	while (d && (de = readdir(d)))
		if (de->d_name[0] != '.')
			unlinkat(dirfd(d), de->d_name, 0);
	if (d)
		closedir(d);
	else if (fd >= 0)
		close(fd);
	unlinkat(out_fd, hash, AT_REMOVEDIR);
}

static bool archive_name(const char *name, char hash[BPFSTASH_HEX_LEN + 1])
{
	size_t len = strlen(name);

	if (len != BPFSTASH_HEX_LEN + strlen(ARCHIVE_SUFFIX) ||
	    strcmp(name + BPFSTASH_HEX_LEN, ARCHIVE_SUFFIX))
		return false;
	memcpy(hash, name, BPFSTASH_HEX_LEN);
	hash[BPFSTASH_HEX_LEN] = '\0';
	return bpfstash_name_valid(hash);
}

/* Remove what the extraction left in the private directory, and it. */
void decode_archive_close(struct decode_archive *ar)
{
	struct dirent *de;
	DIR *d;

	if (!ar->dir[0])
		return;
	bpfstash_close(ar->stash);
	ar->stash = NULL;
	d = opendir(ar->dir);
	while (d && (de = readdir(d)))
		if (de->d_name[0] != '.')
			remove_entry_dir(dirfd(d), de->d_name);
	if (d)
		closedir(d);
	rmdir(ar->dir);
	ar->dir[0] = '\0';
}

int decode_archive_open(const char *dir, struct decode_archive *ar)
{
	const char *tmp = getenv("TMPDIR"), *max_env = getenv("BPFSTASH_DECODE_ARCHIVE_MAX");
	char sub[PATH_MAX], path[PATH_MAX], hash[BPFSTASH_HEX_LEN + 1];
	uint64_t max = ARCHIVE_TOTAL_MAX, left;
	struct dirent *de, *fe;
	int out_fd, err;
	DIR *top, *d;

	memset(ar, 0, sizeof(*ar));
	if (max_env && *max_env) {
		char *end;

		errno = 0;
		max = strtoull(max_env, &end, 10);
		if (errno || *end || *max_env == '-') {
			p_err("BPFSTASH_DECODE_ARCHIVE_MAX is a number of bytes, not '%s'", max_env);
			return EXIT_USAGE;
		}
	}
	left = max;
	top = opendir(dir);
	if (!top) {
		p_err("--archive %s: %s", dir, strerror(errno));
		return EXIT_NOSTASH;
	}
	snprintf(ar->dir, sizeof(ar->dir), "%s/bpfstash-decode.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(ar->dir)) {
		p_err("--archive: a private directory in %s: %s", tmp && *tmp ? tmp : "/tmp",
		      strerror(errno));
		ar->dir[0] = '\0';
		closedir(top);
		return EXIT_FAIL;
	}
	out_fd = open(ar->dir, O_RDONLY | O_DIRECTORY);
	/* DIR/xx/HASH.tar.zst, xx the first two digits of HASH. */
	while (out_fd >= 0 && (de = readdir(top))) {
		if (strlen(de->d_name) != 2 || strspn(de->d_name, "0123456789abcdef") != 2)
			continue;
		if (snprintf(sub, sizeof(sub), "%s/%s", dir, de->d_name) >= (int)sizeof(sub))
			continue;
		d = opendir(sub);
		while (d && (fe = readdir(d))) {
			uint32_t version;
			char why[256];

			if (!archive_name(fe->d_name, hash) || strncmp(hash, de->d_name, 2))
				continue;
			if (snprintf(path, sizeof(path), "%s/%s", sub, fe->d_name) >=
			    (int)sizeof(path))
				continue;
			if (ar->full) {
				ar->unread++;
				continue;
			}
			err = extract_archive(path, hash, out_fd, &left, why, sizeof(why));
			if (err == -ENOSPC) {
				/* What it extracted of this one is left out. */
				ar->full = true;
				ar->unread++;
				remove_entry_dir(out_fd, hash);
			} else if (err < 0) {
				p_info("decode: %s: %s; skipped", path, why);
				ar->skipped++;
			} else if (err > 0 && !bpfstash_entry_version_at(out_fd, hash, &version) &&
				   version != bpfstash_format_version()) {
				/* Extracted, and left for the library to refuse. */
				p_info("decode: %s: format %u, this reader knows %u; skipped", path,
				       version, bpfstash_format_version());
				ar->newer++;
			} else if (err > 0) {
				ar->entries++;
			}
		}
		if (d)
			closedir(d);
	}
	closedir(top);
	if (ar->full)
		p_info("decode: --archive: the archives' files reached %llu bytes "
		       "(BPFSTASH_DECODE_ARCHIVE_MAX): %u archives not read", (unsigned long long)max,
		       ar->unread);
	if (out_fd < 0) {
		p_err("--archive: %s: %s", ar->dir, strerror(errno));
		decode_archive_close(ar);
		return EXIT_FAIL;
	}
	close(out_fd);
	err = bpfstash_open(ar->dir, &ar->stash);
	if (err) {
		p_err("--archive: %s: %s", ar->dir, strerror(-err));
		decode_archive_close(ar);
		return EXIT_FAIL;
	}
	return EXIT_OK;
}
