/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The tracepoint of the bpfstash load hook: what storing a program cost
 * and what came of it, for perf, bpftrace and the benchmarks.  While it
 * is disabled the hook pays a static branch and reads no clock.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM bpfstash

#if !defined(_TRACE_BPFSTASH_H) || defined(TRACE_HEADER_MULTI_READ)
#define _TRACE_BPFSTASH_H

#include <linux/bpf.h>
#include <linux/tracepoint.h>
#include <uapi/linux/bpfstash.h>

/* What the hook did with a program: bpfstash_store's @outcome. */
#define BPFSTASH_OUTCOMES						\
	EM(BPFSTASH_STORED,		"stored")			\
	EM(BPFSTASH_RELOADED,		"reloaded")			\
	EM(BPFSTASH_PRESENT,		"present")			\
	EM(BPFSTASH_REFUSED_FULL,	"refused_full")			\
	EM(BPFSTASH_REFUSED_NOMEM,	"refused_nomem")		\
	EMe(BPFSTASH_SKIPPED,		"skipped")

#ifndef _TRACE_BPFSTASH_OUTCOME_ONCE
#define _TRACE_BPFSTASH_OUTCOME_ONCE
#undef EM
#undef EMe
#define EM(a, b)	a,
#define EMe(a, b)	a
/*
 * stored: a new entry; reloaded: an unloaded entry of the same content
 * now describes this load; present: the program already had an entry
 * (stored by a start racing with the load); refused_full, refused_nomem:
 * refused, as the stats count them; skipped: not a program the stash may
 * show (hardened, not in kallsyms), or the store stopped meanwhile.
 */
enum bpfstash_outcome { BPFSTASH_OUTCOMES };
#endif

#undef EM
#undef EMe
#define EM(a, b)	TRACE_DEFINE_ENUM(a);
#define EMe(a, b)	TRACE_DEFINE_ENUM(a);
BPFSTASH_OUTCOMES

#undef EM
#undef EMe
#define EM(a, b)	{ a, b },
#define EMe(a, b)	{ a, b }

/*
 * bpfstash_store - the load hook is done with a program
 * @prog: the program, loaded
 * @hash: the name of its entry, or NULL when it has none
 * @outcome: an enum bpfstash_outcome
 * @bytes: what the store's size grew by: the entry and its new blobs when
 *	stored, else 0
 * @hashed: bytes hashed for it: the blobs not found stored by their bytes,
 *	and its name
 * @ns: time spent in the hook, up to this event
 * @hash_ns: of which hashing
 *
 * Fires once per program loaded while the store runs, in the loading
 * task.  The times are read only while the event is enabled: a load under
 * way when it was enabled is not reported.
 */
TRACE_EVENT(bpfstash_store,

	TP_PROTO(const struct bpf_prog *prog, const u8 *hash, int outcome,
		 u64 bytes, u64 hashed, u64 ns, u64 hash_ns),

	TP_ARGS(prog, hash, outcome, bytes, hashed, ns, hash_ns),

	TP_STRUCT__entry(
		__field(u32, id)
		__field(int, outcome)
		__field(u64, bytes)
		__field(u64, hashed)
		__field(u64, ns)
		__field(u64, hash_ns)
		__array(u8, hash, BPFSTASH_HASH_SIZE)
		__array(char, name, BPF_OBJ_NAME_LEN)
	),

	TP_fast_assign(
		__entry->id = prog->aux->id;
		__entry->outcome = outcome;
		__entry->bytes = bytes;
		__entry->hashed = hashed;
		__entry->ns = ns;
		__entry->hash_ns = hash_ns;
		if (hash)
			memcpy(__entry->hash, hash, BPFSTASH_HASH_SIZE);
		else
			memset(__entry->hash, 0, BPFSTASH_HASH_SIZE);
		memcpy(__entry->name, prog->aux->name, BPF_OBJ_NAME_LEN);
	),

	TP_printk("id=%u name=%s outcome=%s hash=%s bytes=%llu hashed=%llu ns=%llu hash_ns=%llu",
		  __entry->id, __entry->name,
		  __print_symbolic(__entry->outcome, BPFSTASH_OUTCOMES),
		  __print_hex_str(__entry->hash, BPFSTASH_HASH_SIZE),
		  __entry->bytes, __entry->hashed, __entry->ns, __entry->hash_ns)
);

#endif /* _TRACE_BPFSTASH_H */

/* This part must be outside protection */
#include <trace/define_trace.h>
