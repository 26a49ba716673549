// SPDX-License-Identifier: GPL-2.0-only
/*
 * Load-path cost of bpfstash: bpf(BPF_PROG_LOAD) + close latency with the
 * stash mounted and not mounted, interleaved in rounds so that drift in a
 * noisy machine hits both sides alike.  Prints p50/p99 per side and the
 * added latency, as text or CSV, and what the kernel measured in its load
 * hook (time, hashing, bytes hashed per load, from the
 * bpfstash:bpfstash_store tracepoint, in traced passes after the timed
 * rounds).
 *
 *   loadbench [-r ROUNDS] [-n LOADS_PER_ROUND] [-o OBJ.bpf.o | -i INSNS] [--csv]
 *
 * -o loads the first program of a libbpf object (BTF, line info, subprogs);
 * -i loads a synthetic socket filter of INSNS instructions without BTF.
 * Needs root; mounts /sys/fs/bpfstash, and stops the store between sides.
 *
 * Some program stays loaded for the whole run (the object itself with -o,
 * a trivial one with -i), as on any system that uses BPF: otherwise the
 * JIT's 2 MB pack (bpf_prog_pack) would be freed with each program and
 * allocated and filled again by the next load, 1.4 M instructions that
 * land on either side depending on when the last free ran.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <sys/syscall.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/vfs.h>
#include <linux/perf_event.h>
#include <time.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "stashfs.h"
#include "stashtrace.h"

#define ROOT STASH_ROOT

struct loadable {
	/* synthetic */
	struct bpf_insn *insns;
	int insn_cnt;
	/* object */
	const char *obj_path;
	struct bpf_object *obj;
	int unique;
	unsigned int seq;
};

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double pct(double *v, int n, double p)
{
	int i = (int)(p / 100.0 * (n - 1) + 0.5);

	return v[i];
}

static int libbpf_quiet(enum libbpf_print_level l, const char *f, va_list ap)
{
	return 0;
}

/*
 * For objects, time exactly the BPF_PROG_LOAD that libbpf issues: libbpf
 * calls syscall(2) from libc, and this executable's syscall() comes first
 * in symbol resolution, so it sees the load's attributes.  They point into
 * the object (instructions, func and line info, the BTF fd), which stays
 * open, so the same load can be replayed as often as needed.
 */
static union bpf_attr captured;
static const char *capture_name;
static long (*real_syscall)(long, ...);

long syscall(long nr, ...)
{
	unsigned long a[5];
	va_list ap;
	int i;

	va_start(ap, nr);
	for (i = 0; i < 5; i++)
		a[i] = va_arg(ap, unsigned long);
	va_end(ap);
	if (!real_syscall)
		real_syscall = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
	if (nr == __NR_bpf && a[0] == BPF_PROG_LOAD && capture_name) {
		const union bpf_attr *attr = (const void *)a[1];

		if (!strncmp(attr->prog_name, capture_name, sizeof(attr->prog_name) - 1))
			memcpy(&captured, attr, a[2] < sizeof(captured) ? a[2] : sizeof(captured));
	}
	return real_syscall(nr, a[0], a[1], a[2], a[3], a[4]);
}

static int prepare_object(struct loadable *l)
{
	struct bpf_program *prog;

	l->obj = bpf_object__open_file(l->obj_path, NULL);
	if (!l->obj)
		return -1;
	prog = bpf_object__next_program(l->obj, NULL);
	if (!prog)
		return -1;
	capture_name = bpf_program__name(prog);
	if (bpf_object__load(l->obj))
		return -1;
	capture_name = NULL;
	return captured.insn_cnt ? 0 : -1;
}

static int load_once(struct loadable *l)
{
	if (l->obj_path) {
		union bpf_attr attr = captured;

		return real_syscall(__NR_bpf, BPF_PROG_LOAD, &attr, sizeof(attr));
	}
	if (l->unique) {
		char name[16];

		/* A distinct name per load: distinct content, a new entry each. */
		snprintf(name, sizeof(name), "b%u", l->seq++);
		return bpf_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, name, "GPL", l->insns,
				     l->insn_cnt, NULL);
	}
	return bpf_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, "bench", "GPL", l->insns,
			     l->insn_cnt, NULL);
}

/* A trivial program, loaded until exit: see the comment at the top. */
static int keep_one_loaded(void)
{
	static const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};

	return bpf_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, "loadbench_keep", "GPL",
			     insns, 2, NULL);
}

static void synth(struct loadable *l, int n)
{
	int i;

	l->insns = calloc(n, sizeof(*l->insns));
	for (i = 0; i < n - 1; i++)
		l->insns[i] = (struct bpf_insn){ .code = BPF_ALU64 | BPF_ADD | BPF_K,
						 .dst_reg = BPF_REG_0, .imm = i };
	l->insns[0] = (struct bpf_insn){ .code = BPF_ALU64 | BPF_MOV | BPF_K,
					 .dst_reg = BPF_REG_0, .imm = 0 };
	l->insns[n - 1] = (struct bpf_insn){ .code = BPF_JMP | BPF_EXIT };
	l->insn_cnt = n;
}

/* Per-CPU side-band listeners, drained by nobody: emission cost only. */
static int listen_fds[64], nr_listen;
static void *listen_maps[64];

static int listen_open(int mmap3)
{
	int cpu, n = sysconf(_SC_NPROCESSORS_ONLN);

	for (cpu = 0; cpu < n && cpu < 64; cpu++) {
		struct perf_event_attr a = {
			.size = sizeof(a), .type = PERF_TYPE_SOFTWARE,
			.config = PERF_COUNT_SW_DUMMY, .sample_id_all = 1,
			.ksymbol = 1, .bpf_event = 1, .mmap3 = mmap3,
			.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME,
		};
		int fd = syscall(__NR_perf_event_open, &a, -1, cpu, -1, 0);

		if (fd < 0)
			return -1;
		/* A ring buffer, as perf has: records are written, not dropped. */
		listen_maps[nr_listen] = mmap(NULL, 65 * 4096, PROT_READ | PROT_WRITE, MAP_SHARED,
					      fd, 0);
		if (listen_maps[nr_listen] == MAP_FAILED)
			return -1;
		listen_fds[nr_listen++] = fd;
	}
	return 0;
}

static void listen_close(void)
{
	/* The mapping holds the event too: unmap, then close. */
	while (nr_listen) {
		nr_listen--;
		munmap(listen_maps[nr_listen], 65 * 4096);
		close(listen_fds[nr_listen]);
	}
}

static void unmount_stash(void)
{
	/* Stop the store: unmounting alone would leave it running. */
	stash_umount();
	/*
	 * Stopping frees every entry after an RCU grace period, in a
	 * worker: let that finish here rather than inside the next round's
	 * loads, whichever side they are.  It is the cost of a stop, not
	 * of a load.
	 */
	usleep(200 * 1000);
}

/*
 * The hook's own account of its time, from the bpfstash:bpfstash_store
 * tracepoint, in passes of their own after the timed rounds: a traced
 * load pays for its trace record, which the latencies must not include.
 * Each pass is a mounted side again: a store started afresh, then @n
 * loads and closes.
 */
static int traced_passes(struct loadable *l, int passes, int n, struct stash_trace_sum *sum)
{
	struct stash_trace *t;
	int p, i, fd;

	t = stash_trace_open();
	if (!t) {
		fprintf(stderr, "loadbench: bpfstash:bpfstash_store: %s\n", strerror(errno));
		return -1;
	}
	for (p = 0; p < passes; p++) {
		unmount_stash();
		if (mount("none", ROOT, "bpfstash", 0, "max_entries=1000000,size=4G")) {
			perror("loadbench: mount");
			break;
		}
		for (i = 0; i < n; i++) {
			fd = load_once(l);
			if (fd < 0) {
				perror("loadbench: load");
				goto out;
			}
			close(fd);
			if (i % 256 == 255)
				stash_trace_read(t, stash_trace_add, sum);
		}
		/* Records of the start's walk are not the load path's: there are none. */
		stash_trace_read(t, stash_trace_add, sum);
	}
out:
	if (stash_trace_lost(t))
		fprintf(stderr, "loadbench: %lld trace records lost\n", stash_trace_lost(t));
	stash_trace_close(t);
	unmount_stash();
	return p == passes && sum->n ? 0 : -1;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "rounds", required_argument, NULL, 'r' },
		{ "loads", required_argument, NULL, 'n' },
		{ "obj", required_argument, NULL, 'o' },
		{ "insns", required_argument, NULL, 'i' },
		{ "csv", no_argument, NULL, 'c' },
		{ "label", required_argument, NULL, 'l' },
		{ "only", required_argument, NULL, 'O' },
		{ "unique", no_argument, NULL, 'u' },
		{ "listeners", no_argument, NULL, 'L' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	struct loadable l = {};
	int rounds = 10, loads = 50, csv = 0, c, r, i, side, only = -1, listeners = 0;
	const char *label = NULL;
	struct stash_trace_sum hook = {};
	double *lat[2];
	int nlat[2] = {};

	while ((c = getopt_long(argc, argv, "r:n:o:i:cl:uh", opts, NULL)) != -1) {
		switch (c) {
		case 'r': rounds = atoi(optarg); break;
		case 'n': loads = atoi(optarg); break;
		case 'o': l.obj_path = optarg; break;
		case 'i': synth(&l, atoi(optarg)); break;
		case 'c': csv = 1; break;
		case 'l': label = optarg; break;
		case 'O': only = !strcmp(optarg, "mounted"); break;
		case 'u': l.unique = 1; break;
		case 'L': listeners = 1; break;
		case 'h':
			printf("usage: loadbench [-r ROUNDS] [-n LOADS] [-o OBJ | -i INSNS] [--csv] [-l LABEL]\n"
			       "                 [--only mounted|unmounted] [--unique] [--listeners]\n"
			       "  --listeners: stash mounted on both sides; compare a KSYMBOL+BPF_EVENT\n"
			       "               listener (side 0) with one that also wants MMAP3 (side 1)\n");
			return 0;
		default:
			return 64;
		}
	}
	if (rounds < 1 || loads < 1)
		return 64;
	if (!l.obj_path && !l.insns)
		synth(&l, 3);
	libbpf_set_print(libbpf_quiet);
	real_syscall = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
	if (l.obj_path && prepare_object(&l)) {
		fprintf(stderr, "loadbench: cannot prepare %s\n", l.obj_path);
		return 1;
	}
	if (!l.obj_path && keep_one_loaded() < 0) {
		perror("loadbench: load the program kept loaded");
		return 1;
	}
	lat[0] = calloc(rounds * loads, sizeof(double));
	lat[1] = calloc(rounds * loads, sizeof(double));

	/* Rounds alternate which side goes first: A B, B A, ... */
	for (r = 0; r < rounds; r++) {
		for (side = 0; side < 2; side++) {
			int mounted = (side + r) % 2;

			/* --only mounted|unmounted: one side, for profiling it. */
			if (only >= 0 && mounted != only)
				continue;

			if (listeners) {
				/*
				 * --listeners: the stash stays mounted; side 0 has a
				 * KSYMBOL+BPF_EVENT listener (what perf opens today), side 1
				 * an MMAP3 listener as well.
				 */
				if (listen_open(mounted)) {
					perror("loadbench: perf_event_open");
					return 1;
				}
			} else {
				unmount_stash();
			}
			if ((mounted || listeners) && !stash_mounted()) {
				if (mount("none", ROOT, "bpfstash", 0, "max_entries=1000000,size=4G")) {
					perror("loadbench: mount");
					return 1;
				}
			}
			for (i = 0; i < loads; i++) {
				double t0 = now_us(), t1;
				int fd = load_once(&l);

				if (fd < 0) {
					perror("loadbench: load");
					return 1;
				}
				close(fd);
				t1 = now_us();
				lat[mounted][nlat[mounted]++] = t1 - t0;
			}
			if (listeners)
				listen_close();
		}
	}
	unmount_stash();
	if (!nlat[0] || !nlat[1]) {
		/* --only: one side's distribution (e.g. to compare kernels). */
		int s = nlat[1] ? 1 : 0;

		qsort(lat[s], nlat[s], sizeof(double), cmp_double);
		if (csv)
			printf("%s,%s,%d,%.1f,%.1f\n", label ? label : "synthetic",
			       s ? "mounted" : "unmounted", nlat[s], pct(lat[s], nlat[s], 50),
			       pct(lat[s], nlat[s], 99));
		else
			printf("%s: %d loads: p50 %.1f us  p99 %.1f us\n",
			       s ? "mounted" : "unmounted", nlat[s], pct(lat[s], nlat[s], 50),
			       pct(lat[s], nlat[s], 99));
		return 0;
	}
	if (traced_passes(&l, rounds < 3 ? rounds : 3, loads, &hook))
		return 1;
	qsort(lat[0], nlat[0], sizeof(double), cmp_double);
	qsort(lat[1], nlat[1], sizeof(double), cmp_double);
	{
		double p50u = pct(lat[0], nlat[0], 50), p99u = pct(lat[0], nlat[0], 99);
		double p50m = pct(lat[1], nlat[1], 50), p99m = pct(lat[1], nlat[1], 99);
		const char *what = label ? label : l.obj_path ? l.obj_path : "synthetic";
		/* The hook's own figures, per traced load. */
		double per = 1.0 / hook.n;
		double hook_us = hook.ns * per / 1000, hash_us = hook.hash_ns * per / 1000;
		double hbytes = hook.hashed * per;

		if (csv)
			printf("%s,%d,%.1f,%.1f,%.1f,%.1f,%.1f,%.2f,%.1f,%.2f,%.2f,%.2f,%.0f\n", what,
			       nlat[0], p50u, p99u, p50m, p99m, p50m - p50u,
			       100 * (p50m - p50u) / p50u, p99m - p99u, 100 * (p99m - p99u) / p99u,
			       hook_us, hash_us, hbytes);
		else
			printf("%s: %d loads per side, interleaved\n"
			       "  not mounted: p50 %.1f us  p99 %.1f us\n"
			       "  mounted:     p50 %.1f us  p99 %.1f us\n"
			       "  added:       p50 %+.1f us (%+.2f%%)  p99 %+.1f us (%+.2f%%)\n"
			       "  in the hook: %.1f us per load, hashing %.1f us of it, "
			       "%.0f bytes hashed (bpfstash:bpfstash_store, %lld traced loads)\n",
			       what, nlat[0], p50u, p99u, p50m, p99m, p50m - p50u,
			       100 * (p50m - p50u) / p50u, p99m - p99u, 100 * (p99m - p99u) / p99u,
			       hook_us, hash_us, hbytes, hook.n);
	}
	return 0;
}
