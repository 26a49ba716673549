/* SPDX-License-Identifier: GPL-2.0-only */
/* Helpers for the in-guest tests that use the bpfstash filesystem. */
#ifndef BPFSTASH_TEST_STASHFS_H
#define BPFSTASH_TEST_STASHFS_H

#include <stdbool.h>
#include <sys/types.h>
#include <linux/types.h>

#define STASH_ROOT "/sys/fs/bpfstash"

/*
 * Mount with @opts (NULL: defaults) onto a stopped store, which the mount
 * starts: unmounting and stopping first if needed.
 */
int stash_mount(const char *opts);
int stash_remount(const char *opts);
/* Stop the store (which frees every entry), then unmount its view. */
void stash_umount(void);
/* Unmount the view only: the store goes on. */
void stash_detach(void);
bool stash_mounted(void);

/* Write @words to the control file (mounted); 0 or -errno. */
int stash_control(const char *words);
/* The control file's line, without its newline; 0 or -errno. */
int stash_control_read(char *buf, size_t size);

/* A value of the stats file, or -1. */
long long stash_stat(const char *key);

/* Number of entry directories in the root. */
int stash_count(void);

/* The entry of the program with id @prog_id, by reading every meta. */
int stash_find_prog(__u32 prog_id, char hex[41]);

/* Read STASH_ROOT/@hex/@file; the caller frees *buf. */
int stash_read(const char *hex, const char *file, void **buf, size_t *size);

/* Write a sysctl (/proc/sys path), returning the old value in @old. */
int sysctl_set(const char *path, const char *val, char *old, size_t old_size);

/*
 * Run @fn(@arg) in a child with uid/gid 1000, no supplementary groups and
 * no capabilities.  Returns the child's exit status, or -1.
 */
int run_unprivileged(int (*fn)(void *), void *arg);

/*
 * In a child: keep only the capabilities in the mask @keep (bit n:
 * capability n) in every set and the bounding set; _exit(120) if that fails.
 */
void set_caps_only(__u64 keep);

/* Load a minimal socket filter without BTF through bpf(); returns its fd. */
int load_raw_prog(const char *name);

/*
 * Load a socket filter of @n straight-line instructions without BTF (r0 +=
 * @imm0 + i for each), for large JITed images; returns its fd or -1.
 */
int load_straight_prog(const char *name, int n, int imm0);

/* Load, run nothing, close: @n tiny programs. Returns the number that loaded. */
int load_close_n(int n);

#endif
