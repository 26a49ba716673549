// SPDX-License-Identifier: GPL-2.0-only
/*
 * libbpfstash's agent interface (bpfstash_agent_*) and `bpfstash watch`
 * against the real kernel:
 *
 *   address_reuse   a program unloaded, another loaded at the same address:
 *                   (address, time) gives each at its own time, and the
 *                   stash's own time-aware resolution agrees (debug kernel)
 *   watch_json      bpfstash watch's lines against bpf_prog_info and the
 *                   stash (debug kernel)
 *   storm_recovers  STASH_STORM programs (default 5 000) loaded and closed
 *                   at once with one page of ring per CPU: records are lost,
 *                   and every program is still known, at its address and
 *                   time, with its unload (bench kernel)
 *   storm_ordered   programs loaded on one CPU and closed on the other
 *                   while a thread polls: every unload is applied after its
 *                   load, none unknown (bench kernel)
 *   images_refused  a trampoline's two versions refused by a full stash:
 *                   the live one resolves at its address, and once
 *                   detached it is gone, from its KSYMBOL unregister
 *                   (debug kernel)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "../lib/test.h"
#include "../lib/proginfo.h"
#include "../lib/stashfs.h"
#include "../../tools/lib/bpfstash/libbpfstash.h"

static uint64_t boot_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* A program's id, its first function's address and length; 0 or -1. */
static int prog_id_addr_len(int fd, __u32 *id, __u64 *addr, __u32 *flen, char tag[17])
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info), fl = 0;
	__u64 ksym = 0;
	int i;

	info.nr_jited_ksyms = 1;
	info.jited_ksyms = (__u64)(unsigned long)&ksym;
	info.nr_jited_func_lens = 1;
	info.jited_func_lens = (__u64)(unsigned long)&fl;
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -1;
	*id = info.id;
	*addr = ksym;
	if (flen)
		*flen = fl;
	if (tag)
		for (i = 0; i < 8; i++)
			snprintf(tag + 2 * i, 3, "%02x", info.tag[i]);
	return 0;
}

static int prog_id_addr(int fd, __u32 *id, __u64 *addr, char tag[17])
{
	return prog_id_addr_len(fd, id, addr, NULL, tag);
}

struct seen {
	__u32 unloaded_id;	/* set when this id's unload event comes */
	bool unloaded;
	__u32 loaded_id;
	bool loaded;
	__u64 image_addr;	/* set when the image at this address goes */
	bool image_unloaded;
	uint64_t image_unload_time;
};

static void on_event(const struct bpfstash_agent_event *ev, void *ctx)
{
	struct seen *s = ctx;

	if (ev->type == BPFSTASH_AGENT_UNLOAD && ev->prog->id == s->unloaded_id)
		s->unloaded = true;
	if (ev->type == BPFSTASH_AGENT_UNLOAD && !ev->prog->id && s->image_addr &&
	    ev->prog->nr_funcs == 1 && ev->prog->funcs[0].addr == s->image_addr) {
		s->image_unloaded = true;
		s->image_unload_time = ev->time;
	}
	if (ev->type == BPFSTASH_AGENT_LOAD && ev->prog->id == s->loaded_id)
		s->loaded = true;
}

/* Poll until *@flag, at most 10 s. */
static bool poll_until(struct bpfstash_agent *a, bool *flag)
{
	int i;

	for (i = 0; i < 100 && !*flag; i++)
		bpfstash_agent_poll(a, 100);
	return *flag;
}

static void check_at(struct bpfstash_agent *a, struct bpfstash *stash, __u64 addr, uint64_t t,
		     __u32 want_id, __u64 func_addr, const char *what)
{
	struct bpfstash_resolve_opts o = { .sz = sizeof(o), .clock = BPFSTASH_CLOCK_BOOTTIME,
					   .time_ns = t };
	struct bpfstash_location loc, sloc;
	const struct bpfstash_entry *e;
	struct bpfstash_entry *se = NULL;
	struct bpfstash_agent_sym sym;

	if (!ASSERT_OK(bpfstash_agent_resolve(a, addr, t, &sym), what))
		return;
	ASSERT_EQ(sym.prog->id, want_id, what);
	ASSERT_EQ(sym.func->addr, func_addr, what);
	ASSERT_EQ(sym.offset, addr - func_addr, what);
	if (!ASSERT_OK(bpfstash_agent_resolve_line(a, &sym, &e, &loc), what))
		return;
	ASSERT_STREQ(bpfstash_entry_name(e), sym.prog->hash, what);
	ASSERT_EQ(bpfstash_entry_meta(e)->prog_id, want_id, what);
	/* The stash's own time-aware resolution, which reads every entry. */
	if (ASSERT_OK(bpfstash_resolve_at(stash, addr, &o, &se, &sloc, NULL), what)) {
		ASSERT_STREQ(bpfstash_entry_name(se), sym.prog->hash, what);
		ASSERT_EQ(sloc.func, loc.func, what);
		bpfstash_entry_free(se);
	}
}

/*
 * The JIT places a program at a random offset in its chunk of
 * bpf_prog_pack, so a new program rarely starts where an old one did, but
 * it covers the old one's bytes: a sample at such an address belongs to
 * whichever program was there at the sample's time.
 */
static void test_address_reuse(void)
{
	struct seen s = {};
	struct bpfstash_agent_opts o = { .sz = sizeof(o), .event_fn = on_event, .ctx = &s };
	struct bpfstash_agent *a = NULL;
	struct bpfstash *stash = NULL;
	struct bpfstash_agent_sym sym;
	__u32 ida, idb = 0, id, lena, len;
	__u64 addra, addrb = 0, addr, x = 0;
	uint64_t ta, tb;
	int fd, i, kept[400], nkept = 0;

	if (!ASSERT_OK(stash_mount(NULL), "mount") ||
	    !ASSERT_OK(bpfstash_agent_open(&o, &a), "agent open") ||
	    !ASSERT_OK(bpfstash_open(STASH_ROOT, &stash), "stash open"))
		goto out;
	fd = load_raw_prog("reuse_a");
	if (!ASSERT_GE(fd, 0, "load a") ||
	    !ASSERT_OK(prog_id_addr_len(fd, &ida, &addra, &lena, NULL), "info a"))
		goto out;
	ta = boot_ns();
	s.unloaded_id = ida;
	close(fd);
	if (!ASSERT_TRUE(poll_until(a, &s.unloaded), "a's unload is seen"))
		goto out;
	/*
	 * bpf_prog_pack hands out the first free chunk, once a's is back (after
	 * an RCU grace period).  Keep the programs that land elsewhere loaded,
	 * so that the next one tries another chunk.
	 */
	for (i = 0; i < 400 && !idb; i++) {
		char name[16];

		snprintf(name, sizeof(name), "reuse_b%d", i);
		fd = load_raw_prog(name);
		if (!ASSERT_GE(fd, 0, "load b") ||
		    !ASSERT_OK(prog_id_addr_len(fd, &id, &addr, &len, NULL), "info b"))
			goto out;
		if (addr < addra + lena && addra < addr + len) {
			idb = id;
			addrb = addr;
			/* the first byte both held */
			x = addr > addra ? addr : addra;
			kept[nkept++] = fd;
		} else if ((addr & ~63ull) <= (addra | 63) && (addra & ~63ull) <= (addr | 63)) {
			/*
			 * In a's 64-byte chunk of the pack, but at an offset that
			 * misses a's bytes: free the chunk for another try.
			 */
			close(fd);
		} else if (nkept < 399) {
			kept[nkept++] = fd;
		} else {
			close(fd);
		}
		if (!idb)
			usleep(5000);
	}
	if (!idb) {
		test__skip("no program covered a's bytes at 0x%llx again in 400 loads",
			   (unsigned long long)addra);
		goto out;
	}
	tb = boot_ns();
	s.loaded_id = idb;
	if (!ASSERT_TRUE(poll_until(a, &s.loaded), "b's load is seen"))
		goto out;
	check_at(a, stash, x, ta, ida, addra, "the address at a's time: a");
	check_at(a, stash, x, tb, idb, addrb, "the address at b's time: b");
	if (ASSERT_OK(bpfstash_agent_resolve(a, x, 0, &sym), "now"))
		ASSERT_EQ(sym.prog->id, idb, "now: the loaded one, b");
	ASSERT_ERR(bpfstash_agent_resolve(a, x, 1, &sym), "before both: nothing");
	test__note("0x%llx: prog %u (at 0x%llx) until %.6f s, then prog %u (at 0x%llx, load %d)",
		   (unsigned long long)x, ida, (unsigned long long)addra, ta / 1e9, idb,
		   (unsigned long long)addrb, i);
out:
	while (nkept > 0)
		close(kept[--nkept]);
	bpfstash_close(stash);
	bpfstash_agent_close(a);
	stash_umount();
}

/* The value of "key": in a JSON line, as text (strings without quotes). */
static bool json_get(const char *line, const char *key, char *out, size_t size)
{
	char pat[64];
	const char *p;
	size_t n;

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	p = strstr(line, pat);
	if (!p)
		return false;
	p += strlen(pat);
	if (*p == '"') {
		p++;
		n = strcspn(p, "\"");
	} else {
		n = strcspn(p, ",}]");
	}
	snprintf(out, size, "%.*s", (int)n, p);
	return true;
}

/* Whether the file @path has a line with all of @a, @b. */
static bool file_has(const char *path, const char *a, const char *b)
{
	char line[4096];
	bool found = false;
	FILE *f = fopen(path, "r");

	while (f && !found && fgets(line, sizeof(line), f))
		found = strstr(line, a) && strstr(line, b);
	if (f)
		fclose(f);
	return found;
}

/*
 * bpfstash watch in the background, writing to a file; a probe program
 * loaded again and again until watch prints it from its record (its rings
 * are open), then the program under test, loaded and closed.
 */
static void test_watch_json(void)
{
	char bin[512], line[4096], v[128], tag[17], hash[41], want[64], path[] = "/tmp/watch-XXXXXX";
	const char *top = getenv("BPFSTASH_TOP");
	bool got_load = false, got_unload = false, ready = false;
	int fd, i, out, status = -1;
	__u32 id, pid_id;
	__u64 addr;
	pid_t pid;
	FILE *f;

	if (!top) {
		test__skip("BPFSTASH_TOP is not set (run through run-suites.sh)");
		return;
	}
	if (!ASSERT_OK(stash_mount(NULL), "mount"))
		return;
	out = mkstemp(path);
	if (!ASSERT_GE(out, 0, "mkstemp"))
		goto out;
	snprintf(bin, sizeof(bin), "%s/build/bpfstash/bpfstash", top);
	pid = fork();
	if (pid == 0) {
		dup2(out, 1);
		execl(bin, bin, "watch", "--duration", "120", (char *)NULL);
		_exit(127);
	}
	close(out);
	if (!ASSERT_GT(pid, 0, "fork"))
		goto out;
	for (i = 0; i < 100 && !ready; i++) {
		fd = load_raw_prog("watch_probe");
		if (fd >= 0)
			close(fd);
		usleep(200 * 1000);
		ready = file_has(path, "\"name\":\"watch_probe\"", "\"source\":\"record\"");
	}
	if (!ASSERT_TRUE(ready, "watch prints a program loaded after it started")) {
		kill(pid, SIGTERM);
		waitpid(pid, NULL, 0);
		goto out;
	}
	fd = load_raw_prog("watch_me");
	if (!ASSERT_GE(fd, 0, "load") || !ASSERT_OK(prog_id_addr(fd, &id, &addr, tag), "info")) {
		kill(pid, SIGTERM);
		waitpid(pid, NULL, 0);
		goto out;
	}
	ASSERT_OK(stash_find_prog(id, hash), "its entry");
	close(fd);
	for (i = 0; i < 100 && !file_has(path, "\"type\":\"unload\"", "\"name\":\"watch_me\""); i++)
		usleep(100 * 1000);
	kill(pid, SIGTERM);
	ASSERT_EQ(waitpid(pid, &status, 0), pid, "wait watch");
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0, "watch exits 0 on SIGTERM");
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f)) {
		bool load;

		if (!json_get(line, "type", v, sizeof(v)) ||
		    !json_get(line, "prog_id", want, sizeof(want)))
			continue;
		pid_id = strtoul(want, NULL, 10);
		if (pid_id != id)
			continue;
		load = !strcmp(v, "load");
		got_load |= load;
		got_unload |= !strcmp(v, "unload");
		ASSERT_TRUE(json_get(line, "name", v, sizeof(v)) && !strcmp(v, "watch_me"), line);
		ASSERT_TRUE(json_get(line, "tag", v, sizeof(v)) && !strcmp(v, tag), line);
		ASSERT_TRUE(json_get(line, "hash", v, sizeof(v)) && !strcmp(v, hash), line);
		ASSERT_TRUE(json_get(line, "stash", v, sizeof(v)) && !strcmp(v, "stashed"), line);
		ASSERT_TRUE(json_get(line, "source", v, sizeof(v)) && !strcmp(v, "record"), line);
		snprintf(want, sizeof(want), "0x%llx", (unsigned long long)addr);
		ASSERT_TRUE(json_get(line, "addr", v, sizeof(v)) && !strcmp(v, want), line);
		/* ns times are strings: a JSON number above 2^53 is rounded by jq. */
		ASSERT_TRUE(strstr(line, "\"time_ns\":\"") && strstr(line, "\"load_time_ns\":\""),
			    line);
		if (!load)
			ASSERT_TRUE(json_get(line, "recovered", v, sizeof(v)) && !strcmp(v, "false") &&
				    strstr(line, "\"unload_time_ns\":\""), line);
	}
	if (f)
		fclose(f);
	ASSERT_TRUE(got_load, "a load line");
	ASSERT_TRUE(got_unload, "an unload line");
out:
	unlink(path);
	stash_umount();
}

static int storm_count(void)
{
	const char *s = getenv("STASH_STORM");

	return s ? atoi(s) : 5000;
}

struct storm_prog {
	__u32 id;
	__u64 addr;
	uint64_t t;	/* while it was loaded */
};

static void test_storm_recovers(void)
{
	const int n = storm_count();
	struct storm_prog *p = calloc(n, sizeof(*p));
	struct seen s = {};
	struct bpfstash_agent_opts o = { .sz = sizeof(o), .ring_pages = 1, .event_fn = on_event,
					 .ctx = &s };
	struct bpfstash_agent_stats st;
	struct bpfstash_agent *a = NULL;
	int i, loaded = 0, right = 0, unloaded = 0, fd;
	uint64_t t0;

	if (!ASSERT_PTR_OK(p, "alloc") || !ASSERT_OK(stash_mount(NULL), "mount") ||
	    !ASSERT_OK(bpfstash_agent_open(&o, &a), "agent open"))
		goto out;
	t0 = boot_ns();
	for (i = 0; i < n; i++) {
		char name[16];

		snprintf(name, sizeof(name), "storm%d", i);
		fd = load_raw_prog(name);
		if (fd < 0)
			continue;
		if (!prog_id_addr(fd, &p[i].id, &p[i].addr, NULL)) {
			p[i].t = boot_ns();
			loaded++;
		}
		close(fd);
		/* An agent that polls now and then, as a busy profiler does. */
		if (i % 500 == 499)
			bpfstash_agent_poll(a, 0);
	}
	bpfstash_agent_poll(a, 0);
	/*
	 * The kernel reports a loss with the next record it can write: one
	 * more program makes sure the last one is told.
	 */
	fd = load_raw_prog("storm_last");
	if (ASSERT_GE(fd, 0, "last load")) {
		__u64 addr;

		prog_id_addr(fd, &s.unloaded_id, &addr, NULL);
		close(fd);
	}
	ASSERT_TRUE(poll_until(a, &s.unloaded), "the last program's unload is seen");
	bpfstash_agent_get_stats(a, &st);
	for (i = 0; i < n; i++) {
		struct bpfstash_agent_sym sym;

		if (!p[i].id)
			continue;
		if (bpfstash_agent_resolve(a, p[i].addr, p[i].t, &sym) || sym.prog->id != p[i].id)
			continue;
		right++;
		unloaded += sym.prog->unload_time > p[i].t;
	}
	ASSERT_EQ(loaded, n, "every program loaded");
	ASSERT_GT(st.lost, 0, "records were lost (one page per CPU)");
	ASSERT_GE(st.recoveries, 1, "the agent recovered from the stash");
	ASSERT_EQ(right, loaded, "every program resolves at its address and time");
	ASSERT_EQ(unloaded, loaded, "every program's unload is known");
	test__note("%d programs in %.1f s: %llu records kept, %llu lost, %llu recoveries "
		   "(%llu loads and %llu unloads from the stash); %d/%d resolved, %d/%d unloaded",
		   n, (boot_ns() - t0) / 1e9, (unsigned long long)st.records,
		   (unsigned long long)st.lost, (unsigned long long)st.recoveries,
		   (unsigned long long)st.recovered_loads,
		   (unsigned long long)st.recovered_unloads, right, loaded, unloaded, loaded);
out:
	bpfstash_agent_close(a);
	free(p);
	stash_umount();
}

struct poller {
	struct bpfstash_agent *a;
	volatile bool stop;
	long polls;
};

static void *poll_thread(void *arg)
{
	struct poller *pl = arg;

	while (!pl->stop) {
		bpfstash_agent_poll(pl->a, 0);
		pl->polls++;
	}
	return NULL;
}

static int pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

/*
 * Each program loaded on CPU 0 and closed on CPU 1, while a thread polls
 * the agent without pause: a program's load record is in CPU 0's ring and
 * its unload in CPU 1's, and a poll that reads CPU 0's ring just before
 * the load and CPU 1's just after the unload sees the unload first.  The
 * agent holds records back until no older one can come: every unload is
 * applied to its program.
 */
static void test_storm_ordered(void)
{
	const int n = storm_count() / 5;
	struct storm_prog *p = calloc(n, sizeof(*p));
	struct seen s = {};
	struct bpfstash_agent_opts o = { .sz = sizeof(o), .event_fn = on_event, .ctx = &s };
	struct bpfstash_agent_stats st;
	struct poller pl = {};
	pthread_t th;
	cpu_set_t all;
	bool started = false;
	int i, loaded = 0, right = 0, unloaded = 0, fd;
	uint64_t t0;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
		test__skip("one CPU: a program's two records cannot be in two rings");
		free(p);
		return;
	}
	sched_getaffinity(0, sizeof(all), &all);
	if (!ASSERT_PTR_OK(p, "alloc") || !ASSERT_OK(stash_mount(NULL), "mount") ||
	    !ASSERT_OK(bpfstash_agent_open(&o, &pl.a), "agent open"))
		goto out;
	if (!ASSERT_OK(pthread_create(&th, NULL, poll_thread, &pl), "poll thread"))
		goto out;
	started = true;
	t0 = boot_ns();
	for (i = 0; i < n; i++) {
		char name[16];

		snprintf(name, sizeof(name), "order%d", i);
		if (pin(0) || (fd = load_raw_prog(name)) < 0)
			continue;
		if (!prog_id_addr(fd, &p[i].id, &p[i].addr, NULL)) {
			p[i].t = boot_ns();
			loaded++;
		}
		pin(1);
		close(fd);
	}
	sched_setaffinity(0, sizeof(all), &all);
	/* The last program's unload, seen by the thread, ends the storm. */
	fd = load_raw_prog("order_last");
	if (ASSERT_GE(fd, 0, "last load")) {
		__u64 addr;

		prog_id_addr(fd, &s.unloaded_id, &addr, NULL);
		close(fd);
	}
	for (i = 0; i < 1000 && !s.unloaded; i++)
		usleep(10000);
	pl.stop = true;
	pthread_join(th, NULL);
	started = false;
	ASSERT_TRUE(s.unloaded, "the last program's unload is seen");
	bpfstash_agent_get_stats(pl.a, &st);
	for (i = 0; i < n; i++) {
		struct bpfstash_agent_sym sym;

		if (!p[i].id)
			continue;
		if (bpfstash_agent_resolve(pl.a, p[i].addr, p[i].t, &sym) || sym.prog->id != p[i].id)
			continue;
		right++;
		unloaded += sym.prog->unload_time > p[i].t;
	}
	ASSERT_EQ(loaded, n, "every program loaded");
	ASSERT_EQ(st.lost, 0, "no record lost (64 pages per CPU)");
	ASSERT_EQ(st.unknown_unloads, 0, "no unload without its program");
	ASSERT_EQ(right, loaded, "every program resolves at its address and time");
	ASSERT_EQ(unloaded, loaded, "every program's unload is applied");
	test__note("%d programs loaded on CPU 0 and closed on CPU 1 in %.1f s, %ld polls: "
		   "%llu records, %llu unknown unloads, %d/%d unloaded",
		   n, (boot_ns() - t0) / 1e9, pl.polls, (unsigned long long)st.records,
		   (unsigned long long)st.unknown_unloads, unloaded, loaded);
out:
	if (started) {
		pl.stop = true;
		pthread_join(th, NULL);
	}
	sched_setaffinity(0, sizeof(all), &all);
	bpfstash_agent_close(pl.a);
	free(p);
	stash_umount();
}

/*
 * A BPF trampoline while the stash refuses everything: attaching fentry,
 * then fexit, makes two versions of one trampoline, each a refused
 * PERF_RECORD_MMAP3 without a program id.  The agent indexes each on its
 * own: the live version resolves, by its kallsyms name, at its address.
 */
static void test_images_refused(void)
{
	struct seen s = {};
	struct bpfstash_agent_opts o = { .sz = sizeof(o), .flags = BPFSTASH_AGENT_IMAGE_UNLOADS,
					 .event_fn = on_event, .ctx = &s };
	struct bpf_link *fentry = NULL, *fexit = NULL;
	struct bpfstash_agent *a = NULL;
	struct bpfstash_agent_sym sym;
	struct bpf_object *obj = NULL;
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info), id;
	__u64 addr, after_addr;
	long long refused;
	uint64_t before;
	char name[64];
	int fd, i;

	if (!ASSERT_OK(stash_mount("max_entries=1"), "mount max_entries=1"))
		return;
	for (i = 0; i < 2; i++) {	/* fill it */
		snprintf(name, sizeof(name), "fill%d", i);
		fd = load_raw_prog(name);
		if (fd >= 0)
			close(fd);
	}
	refused = stash_stat("refused_full");
	if (!ASSERT_OK(bpfstash_agent_open(&o, &a), "agent open"))
		goto out;
	obj = bpf_object__open_file(test_prog_path("kinds"), NULL);
	if (!ASSERT_PTR_OK(obj, "open kinds.bpf.o") ||
	    !ASSERT_OK(bpf_object__load(obj), "load"))
		goto out;
	fentry = bpf_program__attach(bpf_object__find_program_by_name(obj, "kinds_fentry"));
	if (!ASSERT_PTR_OK(fentry, "attach fentry"))
		goto out;
	fexit = bpf_program__attach(bpf_object__find_program_by_name(obj, "kinds_fexit"));
	if (!ASSERT_PTR_OK(fexit, "attach fexit"))
		goto out;
	fd = bpf_program__fd(bpf_object__find_program_by_name(obj, "kinds_fentry"));
	if (!ASSERT_OK(bpf_obj_get_info_by_fd(fd, &info, &len), "fentry's info"))
		goto out;
	/* Its key: the BTF object's id, bit 31, the function's BTF id. */
	snprintf(name, sizeof(name), "bpf_trampoline_%llu",
		 ((unsigned long long)info.attach_btf_obj_id << 32) | 0x80000000u |
		 info.attach_btf_id);
	addr = kallsyms_addr(name);
	if (!ASSERT_NEQ(addr, 0, "the trampoline in kallsyms"))
		goto out;
	/* A program loaded after them: once its record is in, theirs are. */
	fd = load_raw_prog("after");
	if (!ASSERT_GE(fd, 0, "load a program after them") ||
	    !ASSERT_OK(prog_id_addr(fd, &id, &after_addr, NULL), "its info"))
		goto out;
	s.loaded_id = id;
	if (!ASSERT_TRUE(poll_until(a, &s.loaded), "its load is seen")) {
		close(fd);
		goto out;
	}
	close(fd);
	/* Two versions, the programs and "after": everything was refused. */
	ASSERT_GE(stash_stat("refused_full"), refused + 5, "everything refused");
	if (ASSERT_OK(bpfstash_agent_resolve(a, addr, 0, &sym), "the live trampoline")) {
		ASSERT_EQ(sym.prog->id, 0, "no program id");
		ASSERT_FALSE(sym.prog->stashed, "refused");
		ASSERT_STREQ(sym.func->name, name, "its kallsyms name");
		ASSERT_EQ(sym.offset, 0, "at its first byte");
		test__note("%s at 0x%llx resolved, every image refused", name,
			   (unsigned long long)addr);
	}

	/*
	 * Detached, the trampoline goes once RCU lets it: the kernel sends no
	 * BPF_EVENT for an image and the stash never held this one, so only
	 * its KSYMBOL unregister can tell the agent.
	 */
	s.image_addr = addr;
	before = boot_ns();
	bpf_link__destroy(fexit);
	bpf_link__destroy(fentry);
	fexit = fentry = NULL;
	for (i = 0; i < 300 && !s.image_unloaded; i++)
		bpfstash_agent_poll(a, 100);
	if (!ASSERT_TRUE(s.image_unloaded, "the detached trampoline's unload is seen"))
		goto out;
	ASSERT_GE(s.image_unload_time, before, "unloaded after the detach");
	ASSERT_EQ(bpfstash_agent_resolve(a, addr, 0, &sym), -ENOENT, "gone now");
	if (ASSERT_OK(bpfstash_agent_resolve(a, addr, before, &sym), "there before the detach"))
		ASSERT_STREQ(sym.func->name, name, "its kallsyms name");
	test__note("its unload seen %.1f ms after the detach",
		   (s.image_unload_time - before) / 1e6);
out:
	bpf_link__destroy(fexit);
	bpf_link__destroy(fentry);
	bpf_object__close(obj);
	bpfstash_agent_close(a);
	stash_umount();
}

static const struct test tests[] = {
	{ "address_reuse", test_address_reuse, true },
	{ "watch_json", test_watch_json, true },
	{ "storm_recovers", test_storm_recovers, true },
	{ "storm_ordered", test_storm_ordered, true },
	{ "images_refused", test_images_refused, true },
	{}
};

int main(int argc, char **argv)
{
	return test_main("agent", tests, argc, argv);
}
