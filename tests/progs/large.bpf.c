// SPDX-License-Identifier: GPL-2.0-only
/*
 * A large program: fully unrolled loops give thousands of JITed line info
 * records, for resolve throughput and export timing, and tens of KB of
 * JITed code for the load-path benchmarks.  Three subprograms.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#ifndef LARGE_ROUNDS
#define LARGE_ROUNDS 384
#endif

static __attribute__((noinline)) __u64 large_step(__u64 h, __u64 v)
{
	h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
	h *= 0xff51afd7ed558ccdULL;
	return h ^ (h >> 33);
}

static __attribute__((noinline)) __u64 large_mix(__u64 a, __u64 b)
{
	__u64 r = a;
	int i;

#pragma clang loop unroll(full)
	for (i = 0; i < LARGE_ROUNDS; i++) {
		r += b * (i + 1);
		r ^= r >> 17;
		r = (r << 7) | (r >> 57);
		b = b * 0x5851f42d4c957f2dULL + i;
	}
	return r;
}

static __attribute__((noinline)) __u64 large_tail(__u64 h)
{
	int i;

#pragma clang loop unroll(full)
	for (i = 0; i < LARGE_ROUNDS / 2; i++) {
		h = large_step(h, i);
		h += i * 3;
	}
	return h;
}

SEC("xdp")
int stash_large(struct xdp_md *ctx)
{
	__u64 h = ctx->data_end - ctx->data;

	h = large_mix(h, ctx->ingress_ifindex);
	h = large_tail(h);
	return h == 42 ? XDP_DROP : XDP_PASS;
}

char LICENSE[] SEC("license") = "GPL";
