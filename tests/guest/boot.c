// SPDX-License-Identifier: GPL-2.0-only
/*
 * The store started by the bpfstash= boot parameter, in a boot whose
 * command line has it (scripts/check.sh boots the bench kernel with
 * "bpfstash=on,size=256M,max_entries=100000 bpfstash=size=12Q"): a program
 * loaded and closed before anything mounted the filesystem is there when
 * it is mounted, with the limits the parameter gave, and the bad second
 * parameter was refused with a message while the boot went on.  Run first
 * in its boot: it stops the store at the end, so that the suites after it
 * start from a stopped store as usual.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/klog.h>
#include <sys/mount.h>
#include <unistd.h>
#include <linux/bpfstash.h>
#include <bpf/bpf.h>

#include "../lib/test.h"
#include "../lib/stashfs.h"

#define BOOT_SIZE	(256 << 20)
#define BOOT_ENTRIES	100000

static bool cmdline_has(const char *word)
{
	char line[4096];
	FILE *f = fopen("/proc/cmdline", "r");
	bool found = false;

	if (f && fgets(line, sizeof(line), f))
		found = strstr(line, word) != NULL;
	if (f)
		fclose(f);
	return found;
}

/* Whether the kernel's log has a line containing @text. */
static bool klog_has(const char *text)
{
	int size = klogctl(10 /* SYSLOG_ACTION_SIZE_BUFFER */, NULL, 0);
	char *buf;
	bool found;
	int n;

	if (size <= 0)
		return false;
	buf = calloc(1, size + 1);
	if (!buf)
		return false;
	n = klogctl(3 /* SYSLOG_ACTION_READ_ALL */, buf, size);
	found = n > 0 && strstr(buf, text);
	free(buf);
	return found;
}

static void test_captured_before_mount(void)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	char line[128], want[128], hex[41];
	struct bpfstash_meta *m;
	size_t size;
	int fd;

	if (!cmdline_has("bpfstash=on")) {
		test__skip("the kernel was booted without bpfstash=on (/proc/cmdline)");
		return;
	}
	if (!ASSERT_FALSE(stash_mounted(), "nothing has mounted the stash yet"))
		return;
	fd = load_raw_prog("boot_early");
	if (!ASSERT_GE(fd, 0, "load a program"))
		return;
	ASSERT_OK(bpf_obj_get_info_by_fd(fd, &info, &len), "its id");
	close(fd);

	/* mount(2) itself: stash_mount() would stop the store first. */
	if (!ASSERT_OK(mount("none", STASH_ROOT, "bpfstash", 0, NULL), "mount"))
		return;
	ASSERT_OK(stash_control_read(line, sizeof(line)), "read control");
	snprintf(want, sizeof(want), "on size=%d max_entries=%d", BOOT_SIZE, BOOT_ENTRIES);
	ASSERT_STREQ(line, want, "on since boot, with the parameter's limits");
	if (ASSERT_OK(stash_find_prog(info.id, hex), "the program closed before the mount is stored") &&
	    ASSERT_OK(stash_read(hex, "meta", (void **)&m, &size), "read its meta")) {
		ASSERT_FALSE(m->flags & BPFSTASH_META_LOADED, "and marked unloaded");
		free(m);
	}
	ASSERT_GE(stash_stat("stored"), 1, "stored when it was loaded...");
	ASSERT_EQ(stash_stat("preexisting"), 0, "...not by the mount");
	ASSERT_TRUE(klog_has("bpfstash: storing programs from boot (size=268435456 max_entries=100000)"),
		    "the kernel says it started the store at boot");
	ASSERT_TRUE(klog_has("bpfstash: bpfstash=size=12Q: size=12Q: not a size in bytes"),
		    "and refused the bad parameter, naming it");

	/* The parameter's limits are the defaults a stop returns to. */
	ASSERT_OK(stash_control("off"), "stop");
	ASSERT_OK(stash_control_read(line, sizeof(line)), "read control");
	snprintf(want, sizeof(want), "off size=%d max_entries=%d", BOOT_SIZE, BOOT_ENTRIES);
	ASSERT_STREQ(line, want, "stopped, the parameter's limits kept as the defaults");
	stash_umount();
}

static const struct test tests[] = {
	{ "captured_before_mount", test_captured_before_mount },
	{}
};

int main(int argc, char **argv)
{
	return test_main("boot", tests, argc, argv);
}
