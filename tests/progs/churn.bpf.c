// SPDX-License-Identifier: GPL-2.0-only
/*
 * The program the perf tests profile (tests/perf/bpf_churn.c loads it,
 * runs it hot with BPF_PROG_TEST_RUN and closes it, 200 times).  Like
 * subprogs.bpf.c it has real subprograms (bpf-to-bpf calls, and a
 * bpf_loop() callback), BTF and line info, and distinct source lines in
 * every function.  One run does enough work (bpf_loop keeps verification
 * cheap) that a profiler's samples land in the program, not in the
 * test-run harness around it.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#define ROUNDS 8
#define STEPS 512

struct churn_state {
	__u32 h;
	__u32 len;
};

static __attribute__((noinline)) __u32 churn_mix(__u32 h, __u32 v)
{
	h ^= v;
	h *= 0x01000193;
	h ^= h >> 15;
	h *= 0x2c1b3c6d;
	h ^= h >> 12;
	return h;
}

static __attribute__((noinline)) __u32 churn_fold(__u32 a, __u32 b)
{
	__u32 r = a;
	int i;

	for (i = 0; i < ROUNDS; i++) {
		r = churn_mix(r, b + i);
		b = (b << 3) | (b >> 29);
	}
	return r;
}

static int churn_step(__u32 i, void *data)
{
	struct churn_state *s = data;

	s->h = churn_fold(s->h, s->len + i);
	return 0;
}

static __attribute__((noinline)) __u32 churn_finish(__u32 h)
{
	h ^= h >> 16;
	h *= 0x85ebca6b;
	h ^= h >> 13;
	h *= 0xc2b2ae35;
	h ^= h >> 16;
	return h;
}

/*
 * A tc program: its BPF_PROG_TEST_RUN runs it 'repeat' times on one skb,
 * where XDP's would first swap it into the XDP dispatcher and wait for an
 * RCU grace period, which leaves the CPU idle rather than in the program.
 */
SEC("tc")
int churn(struct __sk_buff *skb)
{
	struct churn_state s = {
		.h = 0x811c9dc5,
		.len = skb->len,
	};

	bpf_loop(STEPS, churn_step, &s, 0);
	return churn_finish(s.h) == 0xdeadbeef;
}

char LICENSE[] SEC("license") = "GPL";
