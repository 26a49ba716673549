// SPDX-License-Identifier: GPL-2.0-only
/*
 * kallsyms for bpfstash decode: a frame "sym+off" whose offset lies past
 * sym's end names an address after the wrong symbol.  bpftrace prints its
 * maps when it exits, usually after the programs it profiled are gone,
 * and names each of their addresses after the last kernel symbol before
 * it ("_einittext+505512415"); the address is sym's plus off, and decode
 * resolves it as a bare address.
 *
 * The file is untrusted (a copy from another machine): lines that do not
 * parse are skipped, and nothing is assumed about its order.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode.h"

struct ksym {
	uint64_t addr;
	char *name;
};

struct decode_ksyms {
	struct ksym *by_addr;		/* sorted by address */
	size_t nr;
	size_t *by_name;		/* indices into by_addr, sorted by name */
};

static int cmp_addr(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static const struct decode_ksyms *sort_ctx;

static int cmp_name(const void *a, const void *b)
{
	const size_t *x = a, *y = b;

	return strcmp(sort_ctx->by_addr[*x].name, sort_ctx->by_addr[*y].name);
}

void decode_ksyms_free(struct decode_ksyms *k)
{
	size_t i;

	if (!k)
		return;
	for (i = 0; i < k->nr; i++)
		free(k->by_addr[i].name);
	free(k->by_addr);
	free(k->by_name);
	free(k);
}

struct decode_ksyms *decode_ksyms_load(const char *path)
{
	struct decode_ksyms *k = calloc(1, sizeof(*k));
	char *line = NULL, name[DECODE_SYM_MAX], type;
	unsigned long long addr;
	size_t cap = 0, alloc = 0, i;
	bool any_addr = false;
	FILE *f;
	int err = ENOMEM;

	if (!k)
		return NULL;
	f = fopen(path, "re");
	if (!f) {
		err = errno;
		goto fail;
	}
	while (getline(&line, &cap, f) > 0) {
		struct ksym *tmp;

		/* "ffffffff81000000 T _stext", a module's with " [mod]" after. */
		if (sscanf(line, "%llx %c %511s", &addr, &type, name) != 3)
			continue;
		if (k->nr == alloc) {
			alloc = alloc ? alloc * 2 : 65536;
			tmp = realloc(k->by_addr, alloc * sizeof(*tmp));
			if (!tmp)
				goto fail_file;
			k->by_addr = tmp;
		}
		k->by_addr[k->nr].addr = addr;
		k->by_addr[k->nr].name = strdup(name);
		if (!k->by_addr[k->nr].name)
			goto fail_file;
		k->nr++;
		any_addr |= addr != 0;
	}
	if (ferror(f)) {
		err = EIO;
		goto fail_file;
	}
	fclose(f);
	free(line);
	line = NULL;
	if (!any_addr) {
		err = ENODATA;
		goto fail;
	}
	k->by_name = malloc((k->nr ? k->nr : 1) * sizeof(*k->by_name));
	if (!k->by_name)
		goto fail;
	qsort(k->by_addr, k->nr, sizeof(*k->by_addr), cmp_addr);
	for (i = 0; i < k->nr; i++)
		k->by_name[i] = i;
	sort_ctx = k;
	qsort(k->by_name, k->nr, sizeof(*k->by_name), cmp_name);
	return k;
fail_file:
	fclose(f);
fail:
	free(line);
	decode_ksyms_free(k);
	errno = err;
	return NULL;
}

bool decode_ksyms_misnamed(const struct decode_ksyms *k, const char *name, uint64_t off,
			   uint64_t *addr)
{
	size_t lo = 0, hi = k->nr, mid, i;
	uint64_t start;
	int c;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		c = strcmp(k->by_addr[k->by_name[mid]].name, name);
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == k->nr || strcmp(k->by_addr[k->by_name[lo]].name, name))
		return false;
	/* A name held twice (static functions): which one is unknown. */
	if (lo + 1 < k->nr && !strcmp(k->by_addr[k->by_name[lo + 1]].name, name))
		return false;
	i = k->by_name[lo];
	start = k->by_addr[i].addr;
	/* Its end: the next symbol at a higher address. */
	while (i + 1 < k->nr && k->by_addr[i + 1].addr == start)
		i++;
	if (i + 1 < k->nr && off < k->by_addr[i + 1].addr - start)
		return false;
	/* Past the last symbol, any offset is out of it: no end to compare with. */
	if (i + 1 == k->nr || start + off < start)
		return false;
	*addr = start + off;
	return true;
}
