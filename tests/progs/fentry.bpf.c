// SPDX-License-Identifier: GPL-2.0-only
/*
 * An fentry program for another BPF program: attaching it text-pokes the
 * target's JITed image.  The target is set at load time
 * (bpf_program__set_attach_target), the section name only gives the type.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

__u64 calls;

SEC("fentry/stash_subprogs")
int stash_on_entry(void *ctx)
{
	__sync_fetch_and_add(&calls, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
