// SPDX-License-Identifier: GPL-2.0-only
/*
 * bpfstash decode: a frame that names its entry's hash (perf script's DSO,
 * /sys/fs/bpfstash/HASH), resolved through debuginfod when no local source
 * has the entry.  debuginfod serves an entry as the ELF file bpfstash
 * export and bpfstash-gc's archives hold (its build-id is the hash): the
 * functions at their load addresses, a symbol each, and a DWARF line table.
 * The line of an address comes from that table, as addr2line(1) reads it.
 */
#define _GNU_SOURCE
#include <dwarf.h>
#include <elfutils/debuginfod.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "main.h"
#include "decode.h"

/* The address of symbol @name in ELF @fd, or 0. */
static uint64_t symbol_addr(int fd, const char *name)
{
	Elf_Scn *scn = NULL;
	uint64_t addr = 0;
	GElf_Shdr sh;
	Elf *elf;

	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	while (elf && !addr && (scn = elf_nextscn(elf, scn))) {
		Elf_Data *data;
		size_t i, n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !sh.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		n = data ? data->d_size / sh.sh_entsize : 0;
		for (i = 0; i < n && !addr; i++) {
			const char *s;
			GElf_Sym sym;

			if (!gelf_getsym(data, i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC)
				continue;
			s = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (s && !strcmp(s, name))
				addr = sym.st_value;
		}
	}
	elf_end(elf);
	return addr;
}

int decode_debuginfod(const struct decode_frame *f, struct decode_line *out)
{
	debuginfod_client *client;
	unsigned char id[BPFSTASH_HASH_SIZE];
	Dwarf_Die cu;
	Dwarf_Line *l;
	Dwarf *dw = NULL;
	const char *file;
	uint64_t addr;
	char *path = NULL;
	unsigned int i;
	int fd, line, col = 0, err = -ENOENT;

	if (!getenv("DEBUGINFOD_URLS") || !*getenv("DEBUGINFOD_URLS"))
		return -ENOENT;
	for (i = 0; i < BPFSTASH_HASH_SIZE; i++)
		if (sscanf(f->hash + 2 * i, "%2hhx", &id[i]) != 1)
			return -EINVAL;
	client = debuginfod_begin();
	if (!client)
		return -ENOMEM;
	fd = debuginfod_find_debuginfo(client, id, sizeof(id), &path);
	debuginfod_end(client);
	free(path);
	if (fd < 0)
		return fd;	/* -ENOENT: the server has no such entry */
	addr = f->has_addr ? f->addr : 0;
	if (!f->has_addr && f->has_symbol) {
		addr = symbol_addr(fd, f->symbol);
		addr = addr ? addr + f->off : 0;
	}
	if (!addr)
		goto out;
	dw = dwarf_begin(fd, DWARF_C_READ);
	if (!dw || !dwarf_addrdie(dw, addr, &cu))
		goto out;
	l = dwarf_getsrc_die(&cu, addr);
	file = l ? dwarf_linesrc(l, NULL, NULL) : NULL;
	if (!file || dwarf_lineno(l, &line))
		goto out;
	dwarf_linecol(l, &col);
	snprintf(out->file, sizeof(out->file), "%s", file);
	out->line = line;
	out->col = col;
	err = 0;
out:
	if (dw)
		dwarf_end(dw);
	close(fd);
	return err;
}
