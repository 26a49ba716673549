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

#define SWAB16(x) ((x) = bswap_16(x))
#define SWAB32(x) ((x) = bswap_32(x))
#define SWAB64(x) ((x) = bswap_64(x))

void bst_swab_content(struct bpfstash_content *c)
{
	SWAB32(c->version);
	SWAB16(c->machine);
	SWAB16(c->__reserved_1);
	SWAB32(c->prog_type);
	SWAB32(c->expected_attach_type);
	SWAB32(c->image_kind);
	SWAB32(c->nr_funcs);
	SWAB32(c->funcs_size);
	SWAB32(c->jited_len);
	SWAB32(c->nr_line_info);
	SWAB32(c->line_info_rec_size);
	SWAB32(c->nr_func_info);
	SWAB32(c->func_info_rec_size);
	SWAB32(c->btf_size);
	SWAB32(c->xlated_len);
	SWAB32(c->verified_insns);
	SWAB32(c->attach_btf_id);
	SWAB32(c->gpl_compatible);
	SWAB32(c->nr_jited_line_info);
	SWAB32(c->nr_pokes);
	SWAB32(c->__reserved_2);
}

void bst_swab_meta(struct bpfstash_meta *m)
{
	SWAB32(m->meta_size);
	SWAB32(m->flags);
	bst_swab_content(&m->content);
	SWAB32(m->prog_id);
	SWAB32(m->uid);
	SWAB32(m->btf_id);
	SWAB32(m->attach_btf_obj_id);
	SWAB32(m->loader_tgid);
	SWAB64(m->load_time);
	SWAB64(m->load_time_real);
	SWAB64(m->unload_time);
	SWAB64(m->unload_time_real);
	SWAB64(m->bytes);
	SWAB64(m->loader_cgroup_id);
}

/* The @nr records at the start of a funcs file of @size bytes. */
void bst_swab_funcs(void *funcs, size_t size, uint32_t nr)
{
	struct bpfstash_func *f = funcs;
	uint32_t i;

	for (i = 0; i < nr && (i + 1) * sizeof(*f) <= size; i++) {
		SWAB64(f[i].addr);
		SWAB32(f[i].len);
		SWAB32(f[i].offset);
		SWAB32(f[i].name_off);
		SWAB16(f[i].entry_poke_off);
		SWAB16(f[i].entry_poke_len);
	}
}

/* Records of 32-bit fields: line info, func info, jited line info, pokes. */
void bst_swab_u32s(void *p, size_t size)
{
	uint32_t *w = p;
	size_t i;

	for (i = 0; i < size / sizeof(*w); i++)
		SWAB32(w[i]);
}

void bst_swab_calls(struct bpfstash_call *c, uint32_t nr)
{
	uint32_t i;

	for (i = 0; i < nr; i++) {
		SWAB32(c[i].kind);
		SWAB64(c[i].addr);
		SWAB32(c[i].prog_id);
		SWAB32(c[i].__reserved);
	}
}
