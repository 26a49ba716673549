// SPDX-License-Identifier: GPL-2.0-only
/*
 * A program of 4 096 instructions in one function, with BTF and line
 * info: a fully unrolled loop, so that each instruction is verified once.
 * The size of a program a profiler typically meets at the top of the
 * range; KUnit's benchmark of the load hook (kernel/bpf/stash_bench_kunit.c)
 * runs the hook on its captured entry.  INSNS4096_ROUNDS and the eight
 * instructions at the end make clang 14 -O2 emit 4 096 instructions.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#ifndef INSNS4096_ROUNDS
#define INSNS4096_ROUNDS 454
#endif

SEC("xdp")
int stash_insns4096(struct xdp_md *ctx)
{
	__u64 h = ctx->data_end - ctx->data;
	int i;

#pragma clang loop unroll(full)
	for (i = 0; i < INSNS4096_ROUNDS; i++) {
		h ^= h >> 13;
		h += i * 0x9e3779b9U;
		h = (h << 5) | (h >> 59);
	}
	/* The last few, which clang cannot fold into the loop's. */
	asm volatile("%[h] += 1\n\t%[h] ^= 2\n\t%[h] += 3\n\t%[h] ^= 4\n\t"
		     "%[h] += 5\n\t%[h] ^= 6\n\t%[h] += 7\n\t%[h] ^= 8"
		     : [h] "+r"(h));
	return h == 42 ? XDP_DROP : XDP_PASS;
}

char LICENSE[] SEC("license") = "GPL";
