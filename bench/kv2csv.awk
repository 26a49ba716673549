# Lines of key=value fields (KUnit's benchmark of the load hook prints one
# per program: "prog=large funcs=... hash_calls=a,b,c ...") as CSV: the
# first line's keys as the header ("prog" named "program"), then one row per
# line; a value's commas become ';'.  bench/hook-kunit.sh, bench/hook-arm64.sh.
{
	n = 0
	for (i = 1; i <= NF; i++) {
		split($i, kv, "=")
		k = kv[1] == "prog" ? "program" : kv[1]
		v = kv[2]
		gsub(",", ";", v)
		head = n ? head "," k : k
		row = n++ ? row "," v : v
	}
	if (NR == 1)
		print head
	print row
}
