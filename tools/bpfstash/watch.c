// SPDX-License-Identifier: GPL-2.0-only
/*
 * bpfstash watch: the load and unload of every BPF program as JSON lines,
 * from PERF_RECORD_MMAP3 and PERF_RECORD_BPF_EVENT through libbpfstash's
 * agent interface; lost records are reported, then recovered from the
 * stash.  It is also the example of that interface: open, poll, print
 * the events.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "main.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = 1;
}

struct watch {
	uint64_t printed;
	bool existing;
	bool opening;	/* the events of the stash's scan at open */
};

static const char *source_name(enum bpfstash_agent_source s)
{
	switch (s) {
	case BPFSTASH_AGENT_FROM_SCAN:
		return "scan";
	case BPFSTASH_AGENT_FROM_RECOVERY:
		return "recovery";
	default:
		return "record";
	}
}

/* PERF_RECORD_MMAP3's flags: why the stash refused a program. */
static const char *refused_why(uint32_t flags)
{
	if (flags & (1u << 1))
		return "full";
	if (flags & (1u << 2))
		return "nomem";
	return "unknown";
}

static void print_prog(json_writer_t *w, const struct bpfstash_agent_prog *p)
{
	char tag[2 * BPFSTASH_TAG_SIZE + 1];
	uint32_t i;

	for (i = 0; i < BPFSTASH_TAG_SIZE; i++)
		snprintf(tag + 2 * i, 3, "%02x", p->tag[i]);
	jsonw_uint_field(w, "prog_id", p->id);
	jsonw_string_field(w, "name", p->name);
	jsonw_string_field(w, "tag", tag);
	if (p->stashed) {
		jsonw_string_field(w, "hash", p->hash);
		jsonw_string_field(w, "stash", "stashed");
	} else {
		jsonw_null_field(w, "hash");
		jsonw_string_field(w, "stash", "refused");
		jsonw_string_field(w, "refused", refused_why(p->flags));
	}
	jsonw_string_field(w, "source", source_name(p->source));
	/* Who loaded it, from its entry (null for a program the stash refused). */
	jsonw_name(w, "loader");
	if (p->has_origin && p->loader_tgid) {
		char boot_id[BPFSTASH_BOOT_ID_LEN + 1];

		jsonw_start_object(w);
		jsonw_uint_field(w, "pid", p->loader_tgid);
		jsonw_string_field(w, "comm", p->loader_comm);
		jsonw_uint_field(w, "cgroup_id", p->loader_cgroup_id);
		bpfstash_boot_id_format(p->boot_id, boot_id);
		jsonw_string_field(w, "boot_id", boot_id);
		jsonw_end_object(w);
	} else {
		jsonw_null(w);
	}
	/* What its last link attached it to: at the unload, or from the stash. */
	jsonw_name(w, "link");
	if (p->link_type) {
		const char *type = libbpf_bpf_link_type_str(p->link_type);

		jsonw_start_object(w);
		if (type)
			jsonw_string_field(w, "type", type);
		else
			jsonw_uint_field(w, "type", p->link_type);
		jsonw_uint_field(w, "id", p->link_id);
		jsonw_string_field(w, "target", p->link_target);
		jsonw_end_object(w);
	} else {
		jsonw_null(w);
	}
	jsonw_u64_string_field(w, "load_time_ns", p->load_time);
	if (p->unload_time)
		jsonw_u64_string_field(w, "unload_time_ns", p->unload_time);
	jsonw_name(w, "functions");
	jsonw_start_array(w);
	for (i = 0; i < p->nr_funcs; i++) {
		jsonw_start_object(w);
		jsonw_uint_field(w, "index", p->funcs[i].index);
		jsonw_string_field(w, "name", p->funcs[i].name);
		jsonw_name(w, "addr");
		jsonw_printf(w, "\"0x%llx\"", (unsigned long long)p->funcs[i].addr);
		jsonw_uint_field(w, "len", p->funcs[i].len);
		jsonw_end_object(w);
	}
	jsonw_end_array(w);
}

static void on_event(const struct bpfstash_agent_event *ev, void *ctx)
{
	static const char *const types[] = {
		[BPFSTASH_AGENT_LOAD] = "load",
		[BPFSTASH_AGENT_UNLOAD] = "unload",
		[BPFSTASH_AGENT_LOST] = "lost",
		[BPFSTASH_AGENT_RECOVERED] = "recovered",
	};
	struct watch *wt = ctx;
	json_writer_t *w;

	/* What the stash held before: only with --existing. */
	if (wt->opening && !wt->existing)
		return;
	if (opts.count && wt->printed >= opts.count)
		return;
	/* One writer per event: one object, one line. */
	w = jsonw_new(stdout);
	if (!w)
		return;
	jsonw_start_object(w);
	jsonw_string_field(w, "type", types[ev->type]);
	jsonw_u64_string_field(w, "time_ns", ev->time);
	switch (ev->type) {
	case BPFSTASH_AGENT_UNLOAD:
		jsonw_bool_field(w, "recovered", ev->recovered);
		/* fall through */
	case BPFSTASH_AGENT_LOAD:
		print_prog(w, ev->prog);
		break;
	case BPFSTASH_AGENT_RECOVERED:
		jsonw_uint_field(w, "loads", ev->loads);
		jsonw_uint_field(w, "unloads", ev->unloads);
		/* fall through */
	case BPFSTASH_AGENT_LOST:
		jsonw_uint_field(w, "lost", ev->lost);
		break;
	}
	jsonw_end_object(w);
	jsonw_destroy(&w);
	wt->printed++;
}

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int do_watch(int argc, char **argv)
{
	struct watch wt = { .existing = opts.existing };
	struct bpfstash_agent_opts ao = {
		.sz = sizeof(ao),
		.ring_pages = opts.pages,
		/* Every unload, images' too, at the cost of more records. */
		.flags = BPFSTASH_AGENT_SCAN | BPFSTASH_AGENT_IMAGE_UNLOADS | BPFSTASH_AGENT_ORIGIN,
		.event_fn = on_event,
		.ctx = &wt,
	};
	struct bpfstash_agent_stats st;
	struct bpfstash_agent *agent;
	struct bpfstash *stash;
	struct sigaction sa = { .sa_handler = on_signal };
	double end = opts.duration > 0 ? mono_s() + opts.duration : 0;
	int ret, err;

	if (argc)
		return usage_error("watch takes no arguments ('%s')", argv[0]);
	if (opts.pages & (opts.pages - 1))
		return usage_error("--pages %zu is not a power of two", opts.pages);
	/* The same checks and messages as every command: is there a stash? */
	ret = stash_open(&stash);
	if (ret)
		return ret;
	bpfstash_close(stash);
	ao.root = opts.root;

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	wt.opening = true;
	err = bpfstash_agent_open(&ao, &agent);
	wt.opening = false;
	if (err) {
		if (err == -EACCES || err == -EPERM)
			p_err("cannot open the perf events: %s (needs CAP_PERFMON, or "
			      "kernel.perf_event_paranoid <= 1)", strerror(-err));
		else if (err == -EOPNOTSUPP)
			p_err("cannot open the perf events: this kernel has no "
			      "PERF_RECORD_MMAP3");
		else
			p_err("cannot start watching: %s", errstr(err));
		return EXIT_NOSTASH;
	}
	/* Events go to stdout as JSON lines whatever --json says. */
	if (json_wtr)
		jsonw_destroy(&json_wtr);
	ret = EXIT_OK;
	while (!stop && (!opts.count || wt.printed < opts.count)) {
		int timeout = 200;

		if (end) {
			double left = end - mono_s();

			if (left <= 0)
				break;
			if (left * 1000 < timeout)
				timeout = left * 1000 + 1;
		}
		err = bpfstash_agent_poll(agent, timeout);
		if (err < 0 && err != -EINTR) {
			p_err("watching: %s", errstr(err));
			ret = EXIT_FAIL;
			break;
		}
	}
	/* What is still in the rings or held back, unless a count was reached. */
	if (ret == EXIT_OK && (!opts.count || wt.printed < opts.count))
		bpfstash_agent_flush(agent);
	bpfstash_agent_get_stats(agent, &st);
	if (opts.verbose)
		fprintf(stderr, "%llu records, %llu lost, %llu recoveries (%llu loads, "
			"%llu unloads recovered), %llu programs\n",
			(unsigned long long)st.records, (unsigned long long)st.lost,
			(unsigned long long)st.recoveries, (unsigned long long)st.recovered_loads,
			(unsigned long long)st.recovered_unloads, (unsigned long long)st.programs);
	bpfstash_agent_close(agent);
	return ret;
}
