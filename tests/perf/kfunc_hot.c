// SPDX-License-Identifier: GPL-2.0-only
/*
 * kfunc_hot: a workload for perf on a program attached to a kernel
 * function.  Loads kinds_fentry of tests/progs/kinds.bpf.c (fentry on
 * bpf_fentry_test1(), with a CO-RE read and a subprogram), attaches it,
 * calls the function through BPF_PROG_TEST_RUN for MS milliseconds, and
 * unloads it, N times: every sample in it is taken in a program that is
 * gone when perf reports.
 *
 *   kfunc_hot OBJECT [-n PROGRAMS] [-m MS_EACH]
 *
 * Prints one line per program: "prog <i> id <prog id> runs <n>".
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
	int n = 5, ms = 200, i, c;
	const char *path;

	if (argc < 2 || !strcmp(argv[1], "--help")) {
		fprintf(stderr, "usage: kfunc_hot OBJECT [-n PROGRAMS] [-m MS_EACH]\n");
		return argc < 2 ? 64 : 0;
	}
	path = argv[1];
	optind = 2;
	while ((c = getopt(argc, argv, "n:m:")) != -1) {
		switch (c) {
		case 'n': n = atoi(optarg); break;
		case 'm': ms = atoi(optarg); break;
		default: return 64;
		}
	}
	for (i = 0; i < n; i++) {
		struct bpf_object *obj = bpf_object__open_file(path, NULL);
		struct bpf_program *p, *hot = NULL;
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);
		struct bpf_link *link;
		long long runs = 0;
		double end;
		int fd;

		if (!obj) {
			perror("kfunc_hot: open");
			return 1;
		}
		bpf_object__for_each_program(p, obj) {
			if (strcmp(bpf_program__name(p), "kinds_fentry"))
				bpf_program__set_autoload(p, false);
			else
				hot = p;
		}
		if (!hot || bpf_object__load(obj)) {
			fprintf(stderr, "kfunc_hot: cannot load kinds_fentry from %s\n", path);
			return 1;
		}
		link = bpf_program__attach(hot);
		if (!link) {
			perror("kfunc_hot: attach");
			return 1;
		}
		fd = bpf_program__fd(hot);
		bpf_obj_get_info_by_fd(fd, &info, &len);
		end = now_ms() + ms;
		while (now_ms() < end) {
			LIBBPF_OPTS(bpf_test_run_opts, opts);

			if (bpf_prog_test_run_opts(fd, &opts)) {
				perror("kfunc_hot: test run");
				return 1;
			}
			runs++;
		}
		bpf_link__destroy(link);
		bpf_object__close(obj);
		printf("prog %d id %u runs %lld\n", i, info.id, runs);
	}
	return 0;
}
