// SPDX-License-Identifier: GPL-2.0
/*
 * What sparse must refuse (scripts/check-static.sh, static.sparse_rcu):
 * the entry pointers of programs and images are __rcu, so each plain
 * access below is an address-space mismatch, and each is marked with the
 * comment the check counts.  Nothing here is ever loaded.
 */
#include <linux/module.h>
#include <linux/bpf.h>
#include <linux/bpfstash.h>

struct bpfstash_entry *probe_prog_read(struct bpf_prog *prog)
{
	return prog->aux->stash;	/* sparse: address space */
}

void probe_prog_write(struct bpf_prog *prog, struct bpfstash_entry *e)
{
	prog->aux->stash = e;		/* sparse: address space */
}

struct bpfstash_entry *probe_ksym_read(struct bpf_ksym *ksym)
{
	return ksym->stash;		/* sparse: address space */
}

void probe_ksym_write(struct bpf_ksym *ksym, struct bpfstash_entry *e)
{
	ksym->stash = e;		/* sparse: address space */
}

MODULE_LICENSE("GPL");
