// SPDX-License-Identifier: GPL-2.0-only
/*
 * bpf_churn: the workload of the perf tests.  Loads a BPF object (by
 * default tests/progs/churn.bpf.c: four functions, BTF, line info),
 * runs its program hot with BPF_PROG_TEST_RUN for a fraction of a second,
 * closes it, and does that again and again, as short-lived programs do.
 *
 *   bpf_churn [-n PROGRAMS] [-m MS_EACH] [-p OBJECT] [-l LOG] [-r READY]
 *
 * -m 0 runs each program until SIGTERM or SIGINT (then the next one, if
 * any, until the next signal): a program loaded before a recording starts
 * and still hot during it.  -r READY creates the file READY once the first
 * program is loaded and running.
 *
 * The log has one line per program, for perf_truth to find, for each
 * sample, which program was running and what its line table says:
 *
 *   prog <i> id <prog id> hash <40 hex> t0 <ns> t1 <ns> runs <n>
 *
 * t0 and t1 (CLOCK_BOOTTIME, the clock of 'perf record -k boottime')
 * bracket the test runs; the hash is the program's bpfstash entry, as the
 * kernel announced it to this process in PERF_RECORD_MMAP3 ("-" if the
 * stash refused the program).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "../lib/perfring.h"
#include "../lib/proginfo.h"

static unsigned long long boottime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

struct hash_ctx {
	__u32 prog_id;
	int found;
	__u8 hash[20];
};

static void find_hash(const struct perf_event_header *h, void *arg)
{
	const struct mmap3_record *m = (const void *)h;
	struct hash_ctx *ctx = arg;

	if (h->type != PERF_RECORD_MMAP3 || m->id != ctx->prog_id ||
	    !(m->flags & PERF_RECORD_MMAP3_STASHED) || m->hash_size != 20)
		return;
	memcpy(ctx->hash, m->hash, 20);
	ctx->found = 1;
}

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = 1;
}

static int usage(void)
{
	fprintf(stderr, "usage: bpf_churn [-n PROGRAMS] [-m MS_EACH] [-p OBJECT] [-l LOG] [-r READY]\n");
	return 64;
}

int main(int argc, char **argv)
{
	const char *object = NULL, *log_path = NULL, *ready = NULL;
	unsigned int nr = 200, ms = 100, i;
	struct perf_event_attr attr;
	unsigned char pkt[64] = {};
	struct ring ring;
	FILE *log = stdout;
	int opt, err;

	while ((opt = getopt(argc, argv, "n:m:p:l:r:h")) != -1) {
		switch (opt) {
		case 'n': nr = strtoul(optarg, NULL, 0); break;
		case 'm': ms = strtoul(optarg, NULL, 0); break;
		case 'p': object = optarg; break;
		case 'l': log_path = optarg; break;
		case 'r': ready = optarg; break;
		default: return usage();
		}
	}
	if (!object)
		object = test_prog_path("churn");
	if (log_path) {
		log = fopen(log_path, "w");
		if (!log) {
			perror(log_path);
			return 1;
		}
	}
	libbpf_set_print(NULL);
	if (!ms) {
		struct sigaction sa = { .sa_handler = on_signal };

		sigaction(SIGTERM, &sa, NULL);
		sigaction(SIGINT, &sa, NULL);
	}

	/* This task's own MMAP3 records: the hash of each program it loads. */
	ring_attr_init(&attr);
	attr.mmap3 = 1;
	err = ring_open(&attr, 0, -1, 16, &ring);
	if (err) {
		fprintf(stderr, "bpf_churn: perf_event_open with mmap3: %s\n", strerror(-err));
		return 69;
	}

	for (i = 0; i < nr; i++) {
		LIBBPF_OPTS(bpf_test_run_opts, topts,
			.data_in = pkt,
			.data_size_in = sizeof(pkt),
			.repeat = 16,
		);
		struct bpf_prog_info info = {};
		__u32 info_len = sizeof(info);
		struct hash_ctx ctx = {};
		unsigned long long t0, t1, end, runs = 0;
		struct bpf_program *prog;
		struct bpf_object *obj;
		char hex[41];
		int fd, k;

		obj = bpf_object__open_file(object, NULL);
		if (!obj || bpf_object__load(obj)) {
			fprintf(stderr, "bpf_churn: cannot load %s\n", object);
			return 1;
		}
		prog = bpf_object__next_program(obj, NULL);
		fd = prog ? bpf_program__fd(prog) : -1;
		if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &info_len)) {
			fprintf(stderr, "bpf_churn: no program in %s\n", object);
			return 1;
		}

		if (ready && i == 0) {
			int rfd = open(ready, O_WRONLY | O_CREAT | O_TRUNC, 0644);

			if (rfd < 0) {
				perror(ready);
				return 1;
			}
			close(rfd);
		}
		stop = 0;
		t0 = boottime_ns();
		end = t0 + ms * 1000000ULL;
		do {
			if (bpf_prog_test_run_opts(fd, &topts)) {
				/* A test run a signal interrupted: -m 0's stop. */
				if (errno == EINTR && stop)
					break;
				fprintf(stderr, "bpf_churn: BPF_PROG_TEST_RUN: %s\n", strerror(errno));
				return 1;
			}
			runs += topts.repeat;
		} while (ms ? boottime_ns() < end : !stop);
		t1 = boottime_ns();
		bpf_object__close(obj);

		/* No hash when the stash refused the program (it is full). */
		ctx.prog_id = info.id;
		ring_drain(&ring, find_hash, &ctx);
		strcpy(hex, "-");
		for (k = 0; ctx.found && k < 20; k++)
			sprintf(hex + 2 * k, "%02x", ctx.hash[k]);
		fprintf(log, "prog %u id %u hash %s t0 %llu t1 %llu runs %llu\n",
			i, info.id, hex, t0, t1, runs);
		fflush(log);
	}
	ring_close(&ring);
	if (log != stdout)
		fclose(log);
	return 0;
}
