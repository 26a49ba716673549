// SPDX-License-Identifier: GPL-2.0-only
/*
 * bpfstash: starting and stopping the store, from the filesystem's
 * control file, its first mount, or the bpfstash= boot parameter.
 * bpfstash_control_lock serialises them; it nests outside
 * bpfstash_store.lock.
 */

#include <linux/bpfstash.h>
#include <linux/init.h>
#include <linux/kstrtox.h>
#include <linux/mutex.h>
#include <linux/security.h>
#include <linux/string.h>

#include "stash.h"

/* Serialises starting and stopping, whoever asks (boot, control, mount). */
static DEFINE_MUTEX(bpfstash_control_lock);

/**
 * bpfstash_store_start - start the store
 * @max_bytes: size=, or 0 for the current limit
 * @max_entries: max_entries=, or 0 for the current limit
 *
 * The bpfstash= boot parameter, a write of "on" to the control file and
 * a mount of a stopped store all come here.  Process context, no
 * filesystem lock held: the start walks and stores the programs already
 * loaded.
 *
 * Return: 0; -EBUSY if the store runs already (its limits unchanged: only
 * control changes them, with bpfstash_store_set_limits()); or the error of
 * allocating the SHA-256 transform.
 */
int bpfstash_store_start(u64 max_bytes, u32 max_entries)
{
	int err;

	mutex_lock(&bpfstash_control_lock);
	err = bpfstash_store_activate(max_bytes, max_entries);
	mutex_unlock(&bpfstash_control_lock);
	return err;
}

/**
 * bpfstash_store_stop - stop the store and drop every entry
 *
 * The filesystem's cached inodes still hold the entries they show: the
 * caller prunes them and then waits with bpfstash_store_drain().
 *
 * Return: true if the store was running.
 */
bool bpfstash_store_stop(void)
{
	bool running;

	mutex_lock(&bpfstash_control_lock);
	running = READ_ONCE(bpfstash_store.active);
	if (running)
		bpfstash_store_deactivate();
	mutex_unlock(&bpfstash_control_lock);
	return running;
}

/**
 * bpfstash_store_running - whether programs are being stored
 */
bool bpfstash_store_running(void)
{
	return READ_ONCE(bpfstash_store.active);
}

/**
 * bpfstash_parse_control - parse the words of bpfstash= and of the control file
 * @s: "on", "off", "size=SIZE" (K, M, G allowed) and "max_entries=N",
 *     separated by commas or white space; modified
 * @c: filled in: @c->on is 1, 0, or -1 if neither was given; a limit not
 *     given is 0
 *
 * Return: 0, or -EINVAL with @c->bad pointing at the word refused and
 * @c->why saying why.
 */
int bpfstash_parse_control(char *s, struct bpfstash_control *c)
{
	char *w, *end;

	memset(c, 0, sizeof(*c));
	c->on = -1;
	while ((w = strsep(&s, ", \t\n"))) {
		if (!*w)
			continue;
		c->bad = w;
		if (!strcmp(w, "on") || !strcmp(w, "off")) {
			int on = w[1] == 'n';

			if (c->on >= 0 && c->on != on) {
				c->why = "on and off at once";
				return -EINVAL;
			}
			c->on = on;
		} else if (str_has_prefix(w, "size=")) {
			c->max_bytes = memparse(w + 5, &end);
			if (end == w + 5 || *end) {
				c->why = "not a size in bytes (K, M, G allowed)";
				return -EINVAL;
			}
			if (!c->max_bytes) {
				c->why = "would refuse every program";
				return -EINVAL;
			}
		} else if (str_has_prefix(w, "max_entries=")) {
			if (kstrtou32(w + 12, 10, &c->max_entries)) {
				c->why = "not a number of entries";
				return -EINVAL;
			}
			if (!c->max_entries) {
				c->why = "would refuse every program";
				return -EINVAL;
			}
		} else {
			c->why = "unknown (on, off, size=, max_entries=)";
			return -EINVAL;
		}
	}
	if (c->on == 0 && (c->max_bytes || c->max_entries)) {
		c->bad = "off";
		c->why = "stopping takes no limits";
		return -EINVAL;
	}
	c->bad = NULL;
	return 0;
}

static bool bpfstash_boot_on __initdata;

/*
 * bpfstash=on,size=64M,max_entries=65536: start the store before the first
 * program is loaded.  The limits also become the defaults that a start
 * without limits gets.  A bad value is refused whole, with a message, and
 * the boot goes on.
 */
static int __init bpfstash_setup(char *str)
{
	struct bpfstash_control c;
	char buf[96];

	if (strscpy(buf, str, sizeof(buf)) < 0) {
		pr_err("bpfstash: bpfstash=%s: too long; ignored\n", str);
		return 1;
	}
	if (bpfstash_parse_control(buf, &c)) {
		pr_err("bpfstash: bpfstash=%s: %s: %s; ignored\n", str, c.bad, c.why);
		return 1;
	}
	if (c.on >= 0)
		bpfstash_boot_on = c.on;
	if (c.max_bytes) {
		bpfstash_default_max_bytes = c.max_bytes;
		atomic64_set(&bpfstash_store.max_bytes, c.max_bytes);
	}
	if (c.max_entries) {
		bpfstash_default_max_entries = c.max_entries;
		bpfstash_store.max_entries = c.max_entries;
	}
	return 1;
}
__setup("bpfstash=", bpfstash_setup);

/*
 * Userspace loads its first program after the initcalls, and the few the
 * kernel loads itself are stored by the start's walk of the loaded ones.
 * At late_initcall, built-in SHA-256 drivers have registered.
 */
static int __init bpfstash_boot_start(void)
{
	int err;

	if (!bpfstash_boot_on)
		return 0;
	/* As mount and "on" refuse under confidentiality lockdown. */
	err = security_locked_down(LOCKDOWN_BPF_READ_KERNEL);
	if (err) {
		pr_err("bpfstash: not storing programs from boot: the kernel is locked down\n");
		return 0;
	}
	err = bpfstash_store_start(0, 0);
	if (err)
		pr_err("bpfstash: cannot start the store at boot: %pe\n", ERR_PTR(err));
	else
		pr_info("bpfstash: storing programs from boot (size=%llu max_entries=%u)\n",
			(u64)atomic64_read(&bpfstash_store.max_bytes), bpfstash_store.max_entries);
	return 0;
}
late_initcall(bpfstash_boot_start);
