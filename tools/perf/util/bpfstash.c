// SPDX-License-Identifier: GPL-2.0
/*
 * Samples in BPF programs resolved through bpfstash entries.
 *
 * PERF_RECORD_MMAP3 gives, for each JITed function of a BPF program, its
 * range and the content hash of the program's bpfstash entry.  The entry
 * exported as an ELF file (libbpfstash) has each function's .text at its
 * load address, a symbol per function, the hash as NT_GNU_BUILD_ID and a
 * .debug_line made from the program's line info.  So the entry is one DSO
 * with the hash as build-id, its maps are identity kernel maps, and its
 * symbols are the ELF's as they are: addresses, symbols, addr2line and
 * objdump all speak absolute addresses, and the ELF is looked up by
 * build-id like any other.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/vfs.h>
#include <linux/compiler.h>
#include <linux/string.h>
#include <linux/zalloc.h>
#ifdef HAVE_LIBELF_SUPPORT
#include <gelf.h>
#endif
#ifdef HAVE_DEBUGINFOD_SUPPORT
#include <elfutils/debuginfod.h>
#endif
#ifdef HAVE_LIBBPFSTASH_SUPPORT
#include <libbpfstash.h>
#endif

#include "bpfstash.h"
#include "build-id.h"
#include "debug.h"
#include "dso.h"
#include "dsos.h"
#include "machine.h"
#include "map.h"
#include "path.h"
#include "symbol.h"
#include "mmap3.h"
#include "event.h"

#ifndef BPFSTASH_MAGIC
#define BPFSTASH_MAGIC		0x62707374	/* include/uapi/linux/magic.h */
#endif

#define BPFSTASH_NAME_HEX	(2 * BUILD_ID_SIZE)

static unsigned int bpfstash_missing;

/* Whether a bpfstash is mounted: the kernel then emits PERF_RECORD_MMAP3. */
bool bpfstash__mounted(void)
{
	struct statfs st;

	return !statfs(BPFSTASH_PERF_ROOT, &st) && (u32)st.f_type == BPFSTASH_MAGIC;
}

/**
 * bpfstash__is_dso_name - whether @name is the long name of an entry's DSO
 * @name: a DSO name, as in the build-id table of a perf.data file
 *
 * BPFSTASH_PERF_ROOT, a slash and a hash of at most BUILD_ID_SIZE bytes in
 * lowercase hex: for the build-id table to give such DSOs their type at
 * once, before they can be mistaken for the kernel's.
 */
bool bpfstash__is_dso_name(const char *name)
{
	size_t root = strlen(BPFSTASH_PERF_ROOT "/"), i;

	if (strncmp(name, BPFSTASH_PERF_ROOT "/", root))
		return false;
	for (i = 0; i < BPFSTASH_NAME_HEX; i++) {
		char c = name[root + i];

		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
			break;
	}
	return i && !(i % 2) && name[root + i] == '\0';
}

/* A kernel-space DSO, not the kernel: loaded by dso__load_bpfstash(). */
void dso__set_bpfstash(struct dso *dso)
{
	dso__set_kernel(dso, DSO_SPACE__KERNEL);
	if (dso__binary_type(dso) != DSO_BINARY_TYPE__BPFSTASH) {
		dso__set_binary_type(dso, DSO_BINARY_TYPE__BPFSTASH);
		dso__set_symtab_type(dso, DSO_BINARY_TYPE__NOT_FOUND);
	}
}

/*
 * The DSO of the entry named by @hash.  Its short name (the Shared Object
 * column) is @prog_name if given when it has no maps yet: the kernel maps
 * are sorted by it, so it is never changed afterwards.
 */
struct dso *machine__findnew_bpfstash_dso(struct machine *machine,
					  const u8 *hash, size_t hash_size,
					  const char *prog_name)
{
	char name[sizeof(BPFSTASH_PERF_ROOT) + SBUILD_ID_SIZE + 1];
	char sbuild_id[SBUILD_ID_SIZE];
	struct build_id bid;
	struct dso *dso;

	build_id__init(&bid, hash, hash_size);
	build_id__sprintf(&bid, sbuild_id);
	snprintf(name, sizeof(name), BPFSTASH_PERF_ROOT "/%s", sbuild_id);

	dso = machine__findnew_dso(machine, name);
	if (!dso)
		return NULL;

	mutex_lock(dso__lock(dso));
	dso__set_bpfstash(dso);
	if (!dso__has_build_id(dso))
		dso__set_build_id(dso, &bid);
	if (prog_name && !strcmp(dso__short_name(dso), sbuild_id)) {
		char *short_name = strdup(prog_name);

		if (short_name)
			dso__set_short_name(dso, short_name, true);
	}
	mutex_unlock(dso__lock(dso));
	return dso;
}

#ifdef HAVE_LIBBPFSTASH_SUPPORT
/*
 * Export the entry @sbuild_id of the mounted stash as an ELF file, into a
 * new file made from the template @path (mkstemp).  An entry whose content
 * does not hash to its name is never used.
 */
static int bpfstash__export(const char *sbuild_id, char *path)
{
	struct bpfstash_entry *entry;
	struct bpfstash *stash;
	int fd, err;

	err = bpfstash_open(NULL, &stash);
	if (err)
		return err;
	err = bpfstash_entry_load(stash, sbuild_id, 0, &entry);
	if (err)
		goto out_close;
	err = bpfstash_entry_verify(entry);
	if (err) {
		pr_warning("bpfstash entry %s does not hash to its name: not used\n",
			   sbuild_id);
		goto out_free;
	}
	fd = mkstemp(path);
	if (fd < 0) {
		err = -errno;
		goto out_free;
	}
	err = bpfstash_entry_export_elf(entry, fd);
	close(fd);
	if (err)
		unlink(path);
out_free:
	bpfstash_entry_free(entry);
out_close:
	bpfstash_close(stash);
	return err;
}

/* The files exported for this run's perf report, removed at exit. */
static char **bpfstash_tmpfiles;
static unsigned int bpfstash_nr_tmpfiles;

static void bpfstash__remove_tmpfiles(void)
{
	while (bpfstash_nr_tmpfiles)
		unlink(bpfstash_tmpfiles[--bpfstash_nr_tmpfiles]);
}

/*
 * On the recording machine, while the entry is still in the stash: export
 * it to a temporary file that lives as long as perf, for objdump and
 * addr2line to read.
 */
static int bpfstash__find_stash(struct dso *dso, char *path, size_t size)
{
	const char *tmpdir = getenv("TMPDIR");
	char sbuild_id[SBUILD_ID_SIZE];
	char **files;
	int err;

	build_id__sprintf(dso__bid_const(dso), sbuild_id);
	files = realloc(bpfstash_tmpfiles, (bpfstash_nr_tmpfiles + 1) * sizeof(*files));
	if (!files)
		return -ENOMEM;
	bpfstash_tmpfiles = files;
	if (!tmpdir || !*tmpdir)
		tmpdir = "/tmp";
	if ((size_t)snprintf(path, size, "%s/perf-bpfstash-%s-XXXXXX", tmpdir,
			     sbuild_id) >= size)
		return -ENAMETOOLONG;
	err = bpfstash__export(sbuild_id, path);
	if (err)
		return err;
	files[bpfstash_nr_tmpfiles] = strdup(path);
	if (!files[bpfstash_nr_tmpfiles]) {
		unlink(path);
		return -ENOMEM;
	}
	if (!bpfstash_nr_tmpfiles++)
		atexit(bpfstash__remove_tmpfiles);
	return 0;
}

/* One PERF_RECORD_MMAP3 per function of a loaded program's entry. */
static int bpfstash__synthesize_entry(const struct perf_tool *tool,
				      perf_event__handler_t process,
				      struct machine *machine,
				      union perf_event *event,
				      const struct bpfstash_entry *entry)
{
	const struct bpfstash_meta *meta = bpfstash_entry_meta(entry);
	struct perf_record_mmap3 *mmap3 = &event->mmap3;
	u32 i;
	int err;

	for (i = 0; i < bpfstash_entry_nr_funcs(entry); i++) {
		const struct bpfstash_func *func = bpfstash_entry_func(entry, i);
		const char *name = bpfstash_entry_func_name(entry, i);
		size_t name_len;

		if (!func || !name)
			return -EINVAL;
		name_len = strnlen(name, KSYM_NAME_LEN - 1);

		memset(event, 0, sizeof(event->mmap3) + machine->id_hdr_size);
		mmap3->header.type = PERF_RECORD_MMAP3;
		mmap3->header.size = PERF_RECORD_MMAP3_FIXED_SIZE +
				     PERF_ALIGN(name_len + 1, sizeof(u64)) +
				     machine->id_hdr_size;
		mmap3->addr = func->addr;
		mmap3->len = func->len;
		mmap3->id = meta->prog_id;
		mmap3->flags = PERF_RECORD_MMAP3_STASHED;
		mmap3->type = PERF_RECORD_KSYMBOL_TYPE_BPF;
		mmap3->func_idx = i;
		mmap3->hash_size = BPFSTASH_HASH_SIZE;
		memcpy(mmap3->hash, meta->hash, BPFSTASH_HASH_SIZE);
		memcpy(mmap3->name, name, name_len);

		err = process(tool, event, NULL, machine);
		if (err)
			return err;
	}
	return 0;
}

/**
 * perf_event__synthesize_bpfstash - PERF_RECORD_MMAP3 for loaded programs
 * @tool: the tool that processes the events
 * @process: called with each record
 * @machine: the host
 *
 * The kernel emits PERF_RECORD_MMAP3 when a program is loaded; for those
 * loaded before the recording started, the stash's entries that are still
 * loaded give the same records (synthesized after their KSYMBOLs).
 *
 * Return: 0, or a negative errno if the stash could not be read.
 */
int perf_event__synthesize_bpfstash(const struct perf_tool *tool,
				    perf_event__handler_t process,
				    struct machine *machine)
{
	struct bpfstash_entry *entry;
	struct bpfstash *stash;
	union perf_event *event;
	size_t i, nr_names;
	char **names;
	int err;

	err = bpfstash_open(NULL, &stash);
	if (err)
		return err;
	err = bpfstash_list(stash, &names, &nr_names);
	if (err)
		goto out_close;
	event = zalloc(sizeof(event->mmap3) + machine->id_hdr_size);
	if (!event) {
		err = -ENOMEM;
		goto out_names;
	}

	for (i = 0; i < nr_names && !err; i++) {
		/* Most entries are of unloaded programs: look at meta first. */
		if (bpfstash_entry_load(stash, names[i], BPFSTASH_LOAD_META, &entry))
			continue;
		if (!bpfstash_entry_loaded(entry)) {
			bpfstash_entry_free(entry);
			continue;
		}
		bpfstash_entry_free(entry);
		/* Gone meanwhile, or unreadable: the KSYMBOLs still name it. */
		if (bpfstash_entry_load(stash, names[i], 0, &entry))
			continue;
		err = bpfstash__synthesize_entry(tool, process, machine, event, entry);
		bpfstash_entry_free(entry);
	}

	free(event);
out_names:
	bpfstash_names_free(names);
out_close:
	bpfstash_close(stash);
	return err;
}

/**
 * bpfstash__cache_build_id - put a bpfstash entry into the build-id cache
 * @dso: a DSO made by machine__findnew_bpfstash_dso()
 *
 * As perf record does for every DSO it saw hit: the entry, exported from
 * the stash as an ELF file, becomes ~/.debug/<entry's directory>/<hash>/elf
 * with its .build-id link, where perf report, perf archive and
 * perf buildid-cache find it on any machine.  Entries are named by their
 * content, so one already cached is left alone.
 *
 * Return: 0, or a negative errno if the entry could not be cached.
 */
int bpfstash__cache_build_id(struct dso *dso)
{
	char sbuild_id[SBUILD_ID_SIZE];
	const char *tmpdir = getenv("TMPDIR");
	char path[PATH_MAX];
	int err;

	build_id__sprintf(dso__bid_const(dso), sbuild_id);
	if (build_id_cache__cached(sbuild_id))
		return 0;

	if (!tmpdir || !*tmpdir)
		tmpdir = "/tmp";
	if ((size_t)snprintf(path, sizeof(path), "%s/perf-bpfstash-%s-XXXXXX",
			     tmpdir, sbuild_id) >= sizeof(path))
		return -ENAMETOOLONG;
	err = bpfstash__export(sbuild_id, path);
	if (err) {
		pr_warning("bpfstash entry %s (%s) could not be exported from %s: %s; it is not in the build-id cache\n",
			   sbuild_id, dso__short_name(dso), BPFSTASH_PERF_ROOT,
			   strerror(-err));
		return err;
	}
	err = build_id_cache__add(sbuild_id, path, path, NULL, false, false,
				  dso__long_name(dso), NULL);
	unlink(path);
	if (err)
		pr_warning("bpfstash entry %s could not be added to the build-id cache\n",
			   sbuild_id);
	return err;
}
#else
static int bpfstash__find_stash(struct dso *dso __maybe_unused,
				char *path __maybe_unused, size_t size __maybe_unused)
{
	return -ENOENT;
}

int perf_event__synthesize_bpfstash(const struct perf_tool *tool __maybe_unused,
				    perf_event__handler_t process __maybe_unused,
				    struct machine *machine __maybe_unused)
{
	return -EOPNOTSUPP;
}

int bpfstash__cache_build_id(struct dso *dso)
{
	char sbuild_id[SBUILD_ID_SIZE];

	build_id__sprintf(dso__bid_const(dso), sbuild_id);
	pr_debug("bpfstash entry %s not cached: perf is built without libbpfstash\n",
		 sbuild_id);
	return 0;
}
#endif

#ifdef HAVE_LIBELF_SUPPORT
/*
 * The symbols of the entry's ELF at their addresses: unlike an ordinary
 * ET_EXEC, nothing is rebased, the maps being identities.
 */
static int bpfstash__load_elf_symbols(struct dso *dso, const char *path)
{
	int fd, nr = 0, err = -EINVAL;
	Elf_Scn *scn = NULL;
	Elf *elf;

	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -errno;
	elf = elf_begin(fd, PERF_ELF_C_READ_MMAP, NULL);
	if (!elf)
		goto out_close;

	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		Elf_Data *data;
		GElf_Shdr shdr;
		size_t i, nsyms;

		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_SYMTAB ||
		    !shdr.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data)
			goto out_end;
		nsyms = shdr.sh_size / shdr.sh_entsize;

		symbols__delete(dso__symbols(dso));
		for (i = 0; i < nsyms; i++) {
			struct symbol *sym;
			const char *name;
			GElf_Sym esym;

			if (!gelf_getsym(data, i, &esym) ||
			    GELF_ST_TYPE(esym.st_info) != STT_FUNC ||
			    esym.st_shndx == SHN_UNDEF || !esym.st_size)
				continue;
			name = elf_strptr(elf, shdr.sh_link, esym.st_name);
			if (!name || !*name)
				continue;
			sym = symbol__new(esym.st_value, esym.st_size,
					  GELF_ST_BIND(esym.st_info), STT_FUNC, name);
			if (!sym) {
				err = -ENOMEM;
				goto out_end;
			}
			dso__insert_symbol(dso, sym);
			nr++;
		}
		err = nr;
		break;
	}
out_end:
	elf_end(elf);
out_close:
	close(fd);
	return err;
}

#ifdef HAVE_DEBUGINFOD_SUPPORT
/* Ask the servers in DEBUGINFOD_URLS; the client caches what it fetches. */
static int bpfstash__find_debuginfod(struct dso *dso, char *path, size_t size)
{
	const struct build_id *bid = dso__bid_const(dso);
	const char *urls = getenv("DEBUGINFOD_URLS");
	debuginfod_client *client;
	char *found = NULL;
	int fd;

	if (!urls || !*urls)
		return -ENOENT;
	client = debuginfod_begin();
	if (!client)
		return -ENOMEM;
	fd = debuginfod_find_debuginfo(client, bid->data, bid->size, &found);
	if (fd < 0)
		fd = debuginfod_find_executable(client, bid->data, bid->size, &found);
	debuginfod_end(client);
	if (fd < 0)
		return fd;
	close(fd);
	snprintf(path, size, "%s", found);
	free(found);
	return 0;
}
#else
static int bpfstash__find_debuginfod(struct dso *dso __maybe_unused,
				     char *path __maybe_unused,
				     size_t size __maybe_unused)
{
	return -ENOENT;
}
#endif

/* Whether @path holds an ELF file with @dso's build-id. */
static bool bpfstash__is_entry_elf(struct dso *dso, const char *path)
{
	struct build_id bid;

	return is_regular_file(path) && filename__read_build_id(path, &bid) > 0 &&
	       dso__build_id_equal(dso, &bid);
}

/**
 * dso__load_bpfstash - load the symbols of a bpfstash entry's DSO
 * @dso: a DSO made by machine__findnew_bpfstash_dso()
 * @map: one of its maps
 *
 * The entry's ELF is looked for where perf looks for any build-id: the
 * build-id cache (where perf record puts the entries it saw hit), the
 * system's debug directory (/usr/lib/debug/.build-id), then in the mounted
 * stash itself (on the recording machine, until the entry is deleted), and
 * at last on the debuginfod servers in DEBUGINFOD_URLS.  An entry found
 * nowhere keeps the function names PERF_RECORD_MMAP3 gave, and is reported.
 *
 * Called with the DSO's lock held, by dso__load().
 *
 * Return: the number of symbols.
 */
int dso__load_bpfstash(struct dso *dso, struct map *map __maybe_unused)
{
	static const enum dso_binary_type types[] = {
		DSO_BINARY_TYPE__BUILD_ID_CACHE,
		DSO_BINARY_TYPE__BUILD_ID_CACHE_DEBUGINFO,
		DSO_BINARY_TYPE__BUILDID_DEBUGINFO,
	};
	enum dso_binary_type found = DSO_BINARY_TYPE__NOT_FOUND;
	char sbuild_id[SBUILD_ID_SIZE];
	char path[PATH_MAX];
	const char *where;
	struct rb_node *nd;
	unsigned int i;
	int nr;

	dso__set_adjust_symbols(dso, false);

	for (i = 0; i < ARRAY_SIZE(types); i++) {
		if (!dso__read_binary_type_filename(dso, types[i], (char *)"",
						    path, sizeof(path)) &&
		    bpfstash__is_entry_elf(dso, path)) {
			found = types[i];
			break;
		}
	}
	if (found == DSO_BINARY_TYPE__NOT_FOUND &&
	    (!bpfstash__find_stash(dso, path, sizeof(path)) ||
	     !bpfstash__find_debuginfod(dso, path, sizeof(path))) &&
	    bpfstash__is_entry_elf(dso, path))
		found = DSO_BINARY_TYPE__BPFSTASH;

	build_id__sprintf(dso__bid_const(dso), sbuild_id);
	if (found != DSO_BINARY_TYPE__NOT_FOUND) {
		nr = bpfstash__load_elf_symbols(dso, path);
		if (nr > 0) {
			dso__set_symtab_type(dso, found);
			dso__set_symsrc_filename(dso, strdup(path));
			pr_debug("bpfstash: entry %s from %s\n", sbuild_id, path);
			return nr;
		}
		where = "whose ELF has no function symbols";
	} else {
		where = "found in no build-id cache, stash or debuginfod server";
	}

	/* The names the records gave are all there is. */
	dso__set_symtab_type(dso, DSO_BINARY_TYPE__NOT_FOUND);
	if (bpfstash_missing++ < 10)
		pr_warning("bpfstash entry %s (%s) %s: its samples have function names, no source lines\n",
			   sbuild_id, dso__short_name(dso), where);
	nr = 0;
	for (nd = rb_first_cached(dso__symbols(dso)); nd; nd = rb_next(nd))
		nr++;
	return nr ?: -1;
}
#else
int dso__load_bpfstash(struct dso *dso __maybe_unused, struct map *map __maybe_unused)
{
	return -1;
}
#endif

unsigned int bpfstash__nr_missing(void)
{
	return bpfstash_missing;
}

void bpfstash__warn_missing(void)
{
	if (!bpfstash_missing)
		return;
	ui__warning("%u BPF programs named by PERF_RECORD_MMAP3 were found in no store:\n"
		    "their samples have function names but no source lines.\n"
		    "Copy the recording machine's ~/.debug ('perf archive'), or set\n"
		    "DEBUGINFOD_URLS to a server of bpfstash-gc archives.\n\n",
		    bpfstash_missing);
}
