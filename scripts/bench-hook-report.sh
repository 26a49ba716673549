#!/bin/sh
# The load hook's section of the benchmark report (Markdown, stdout), from
# RESULTS_DIR/hook.csv (bench/hook-kunit.sh: KUnit's benchmark of the hook
# in user-mode Linux), hook-sha.csv (hashbench --calls: the same hashes
# with the host's SHA-NI code) and uml.csv (6.12's own loads in user-mode
# Linux).  scripts/bench-report.sh includes it; BENCH_ONLY=hook make bench
# writes it alone to build/bench/hook-report.md.
#
#   scripts/bench-hook-report.sh RESULTS_DIR
set -u
res=${1:?usage: bench-hook-report.sh RESULTS_DIR}

cat <<EOF
## The load hook, measured natively (KUnit in user-mode Linux)

KUnit's benchmark of the load hook (\`kernel/bpf/stash_bench_kunit.c\`,
\`bench/hook-kunit.sh\`) runs in the patched 6.12 built as user-mode Linux,
a process on this machine whose kernel code runs at the CPU's own speed.
It rebuilds each program as \`bpf_prog_load()\` hands it to
\`bpfstash_prog_load()\` from the entry the store took of it on x86-64
(\`tests/fixtures\`: JITed functions, jited line info, line and func info,
the BTF loaded with BPF_BTF_LOAD), calls the real hook $(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i } NR == 2 { print $(c["rounds"]) }' "$res/hook.csv" 2>/dev/null) times with the
store running (each time as a program never seen: the entry is deleted and
freed in between, so every blob is hashed), and times SHA-256 over exactly
the bytes the hook hashed, in the same pieces. Before each timed call it
writes again what \`bpf_prog_load()\` writes last before the hook (the
JIT's last pass: each function's image and jited line info; then
\`bpf_prog_kallsyms_add()\`: each function's address and name), so the
hook finds the program as a load leaves it; a second call per round,
without that, finds the program as the previous round left it ("cold"). UML has only the generic
SHA-256 (\`$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i } NR == 2 { print $(c["hash_driver"]) }' "$res/hook.csv" 2>/dev/null)\`); the host's SHA-NI code, what
\`crypto_alloc_shash("sha256")\` gives the hook on an x86 CPU with SHA-NI,
times the same hashes in \`bench/hashbench --calls\`. "Beyond hashing" is
the median over the rounds of the hook's time minus the generic hashing's,
timed one after the other in each round (the target is checked on it; the
cold call's is shown beside it); "hook at SHA-NI" is that plus the SHA-NI time. The load is 6.12's own
\`BPF_PROG_LOAD\` of the same object in user-mode Linux (\`bench/uml.sh\`,
median of the rounds' p50; no JIT there, so it is a load without its JIT).
Target: beyond hashing <= max(2 us, 0.2% of that load).
"Copy floor" is what storing the program's bytes costs at the least,
timed in the same rounds: each blob and the funcs file allocated as the
store holds them and each byte copied once with the store's copy, from
where the hook reads it (for the jited line info, which the hook
computes, as many bytes from the addresses it is computed from). A
snapshot taken at load, as the store takes it, pays at least this beyond
its hashing; where the floor alone is over the target ("floor over"),
no cut in the hook's other work can meet it. Two parts of the floor are
timed on their own. "Image copy": the JITed image, which only the load
can copy as it hashed it (\`bpf_arch_text_poke()\` patches it later, for
tail calls and trampolines). "Kept copy": the line info, func info and
BTF, copied as they are from memory the program keeps unchanged until
the unload hook has run, so a store could copy them then. The rest (the
funcs file, the jited line info) is built from the program, and must be
built at load to be hashed. "Less the kept copy" is beyond hashing less
the kept copy, each round: what a store that copied those bytes at
unload would still cost the load, at least. "Less all but the image" is
beyond hashing less all of the floor but the image: a bound for a store
that also built the rest twice. Both are computed from timings of this
run, not from a store that was built and timed.

$(grep -h '^# ' "$res/hook.csv" "$res/hook-sha.csv" 2>/dev/null | sed 's/^# skipped/**Not measured in this run**: skipped/; s/^# failed/**The benchmark failed**/')

| program | functions | insns | bytes hashed | hook p50 (us) | hook p10-p90 (us) | SHA-256 generic, UML (us) | beyond hashing (us) | beyond hashing, cold (us) | copy floor (us) | beyond hashing and copy floor (us) | image copy (us) | kept copy (us) | less the kept copy (us) | less all but the image (us) | SHA-256 SHA-NI, host (us) | hook at SHA-NI (us) | 6.12 load in UML p50 (us) | beyond / load | hook at SHA-NI / load | target (us) | |
|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|
EOF
awk -F, '
	FILENAME ~ /hook-sha.csv$/ && $1 == "calls" { ni[$2] = $4; next }
	FILENAME ~ /uml.csv$/ && $2 == "unmounted" { load[$1] = $4; next }
	FILENAME ~ /hook.csv$/ && FNR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
	FILENAME ~ /hook.csv$/ && $1 !~ /^#/ {
		hook = $(c["hook_ns"]) / 1000; hash = $(c["hash_ns"]) / 1000
		beyond = $(c["beyond_ns"]) / 1000
		s_cold = ("beyond_cold_ns" in c) ? sprintf("%.2f", $(c["beyond_cold_ns"]) / 1000) : "-"
		copy = ("copy_ns" in c) ? $(c["copy_ns"]) / 1000 : -1
		s_copy = copy >= 0 ? sprintf("%.2f", copy) : "-"
		s_rest = ("beyond_copy_ns" in c) ? sprintf("%.2f", $(c["beyond_copy_ns"]) / 1000) : "-"
		s_img = ("copy_image_ns" in c) ? sprintf("%.2f", $(c["copy_image_ns"]) / 1000) : "-"
		s_kept = ("copy_kept_ns" in c) ? sprintf("%.2f", $(c["copy_kept_ns"]) / 1000) : "-"
		s_lkept = ("beyond_kept_ns" in c) ? sprintf("%.2f", $(c["beyond_kept_ns"]) / 1000) : "-"
		s_late = ("beyond_image_ns" in c) ? sprintf("%.2f", $(c["beyond_image_ns"]) / 1000) : "-"
		sha = ($1 in ni) && ni[$1] != "-" ? ni[$1] / 1000 : -1
		L = ($1 in load) ? load[$1] : -1
		target = L > 0 && 0.002 * L > 2 ? 0.002 * L : 2
		# (In a printf statement an unparenthesised ">" redirects.)
		s_ni = sha >= 0 ? sprintf("%.2f", sha) : "-"
		s_tot = sha >= 0 ? sprintf("%.2f", beyond + sha) : "-"
		s_load = L > 0 ? sprintf("%.0f", L) : "-"
		s_share = L > 0 ? sprintf("%.3f%%", 100 * beyond / L) : "-"
		s_tshare = L > 0 && sha >= 0 ? sprintf("%.3f%%", 100 * (beyond + sha) / L) : "-"
		if (L > 0)
			verdict = beyond <= target ? "pass" : "**FAIL**"
		else
			verdict = "no load figure"
		if (L > 0 && beyond > target && copy > target)
			verdict = verdict " (floor over)"
		printf "| %s | %d | %d | %d | %.2f | %.2f-%.2f | %.2f | %.2f | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %.2f | %s |\n",
			$1, $(c["funcs"]), $(c["xlated_insns"]), $(c["hashed_bytes"]), hook,
			$(c["hook_p10_ns"]) / 1000, $(c["hook_p90_ns"]) / 1000, hash, beyond,
			s_cold, s_copy, s_rest, s_img, s_kept, s_lkept, s_late, s_ni, s_tot, s_load, s_share, s_tshare, target, verdict
	}' "$res/hook-sha.csv" "$res/uml.csv" "$res/hook.csv"

cat <<EOF

Raw: \`results/hook.csv\` (per program: hook p10/p50/p90/p99, the cold call, the copy floor, hashing with
the crypto API's and with lib/crypto's generic SHA-256, the size of each
hash), \`results/hook-sha.csv\` (SHA-NI, AVX2 and generic C on the host for
the same hashes), \`results/uml.csv\`. The hook's medians include what the
kernel's own clock costs UML (a \`ktime_get_ns()\` pair), and UML's timer
ticks land in some samples (p90/p99). What the benchmark leaves out of the
hook: \`bpf_jit_kallsyms_enabled()\` (false without a JIT; two loads of
sysctls), and \`perf_event_bpf_mmap3()\`, which compiles to nothing
without perf events (with no listener it reads one counter).
EOF
