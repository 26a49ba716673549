// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libbpfstash: byte order.  Every multi-byte field of an entry's files is
 * little-endian (<linux/bpfstash.h>), and the library hands the records
 * over in the host's order.  On a little-endian host none of this runs
 * but in the tests, which swap a loaded entry as a big-endian host holds
 * it and check that its hash still verifies (tests/host/test_entry.c).
 * Swapping is its own inverse: the same functions go either way.
 */
#include <byteswap.h>
#include <string.h>

#include "internal.h"

static void swab16(__u16 *x)
{
	*x = bswap_16(*x);
}

static void swab32(__u32 *x)
{
	*x = bswap_32(*x);
}

static void swab64(__u64 *x)
{
	*x = bswap_64(*x);
}

void bst_swab_content(struct bpfstash_content *c)
{
	swab32(&c->version);
	swab16(&c->machine);
	swab16(&c->__reserved_1);
	swab32(&c->prog_type);
	swab32(&c->expected_attach_type);
	swab32(&c->image_kind);
	swab32(&c->nr_funcs);
	swab32(&c->funcs_size);
	swab32(&c->jited_len);
	swab32(&c->nr_line_info);
	swab32(&c->line_info_rec_size);
	swab32(&c->nr_func_info);
	swab32(&c->func_info_rec_size);
	swab32(&c->btf_size);
	swab32(&c->xlated_len);
	swab32(&c->verified_insns);
	swab32(&c->attach_btf_id);
	swab32(&c->gpl_compatible);
	swab32(&c->nr_jited_line_info);
	swab32(&c->nr_pokes);
	swab32(&c->__reserved_2);
}

void bst_swab_meta(struct bpfstash_meta *m)
{
	swab32(&m->meta_size);
	swab32(&m->flags);
	bst_swab_content(&m->content);
	swab32(&m->prog_id);
	swab32(&m->uid);
	swab32(&m->btf_id);
	swab32(&m->attach_btf_obj_id);
	swab32(&m->loader_tgid);
	swab64(&m->load_time);
	swab64(&m->load_time_real);
	swab64(&m->unload_time);
	swab64(&m->unload_time_real);
	swab64(&m->bytes);
	swab64(&m->loader_cgroup_id);
	swab32(&m->link_type);
	swab32(&m->link_id);
}

/* The @nr records at the start of a funcs file of @size bytes. */
void bst_swab_funcs(void *funcs, size_t size, uint32_t nr)
{
	struct bpfstash_func *f = funcs;
	uint32_t i;

	for (i = 0; i < nr && (i + 1) * sizeof(*f) <= size; i++) {
		swab64(&f[i].addr);
		swab32(&f[i].len);
		swab32(&f[i].offset);
		swab32(&f[i].name_off);
		swab16(&f[i].entry_poke_off);
		swab16(&f[i].entry_poke_len);
	}
}

/* Records of 32-bit fields: line info, func info, jited line info, pokes. */
void bst_swab_u32s(void *p, size_t size)
{
	uint32_t *w = p;
	size_t i;

	for (i = 0; i < size / sizeof(*w); i++)
		swab32(&w[i]);
}

void bst_swab_calls(struct bpfstash_call *c, uint32_t nr)
{
	uint32_t i;

	for (i = 0; i < nr; i++) {
		swab32(&c[i].kind);
		swab64(&c[i].addr);
		swab32(&c[i].prog_id);
		swab32(&c[i].__reserved);
	}
}
