# TAP (as cmocka writes it) -> "PASS suite.test", "FAIL suite.test: why",
# "SKIP suite.test: why".  Diagnostics (lines starting with #) are kept
# indented, so that a failure shows its message.
/^ok [0-9]+ - .* # [Ss][Kk][Ii][Pp]/ {
	name = $0; sub(/^ok [0-9]+ - /, "", name); reason = name
	sub(/ # [Ss][Kk][Ii][Pp].*/, "", name); sub(/.* # [Ss][Kk][Ii][Pp] */, "", reason)
	printf "SKIP %s.%s: %s\n", s, name, reason; next
}
/^ok [0-9]+ - / { name = $0; sub(/^ok [0-9]+ - /, "", name); printf "PASS %s.%s\n", s, name; next }
/^not ok [0-9]+ - / { name = $0; sub(/^not ok [0-9]+ - /, "", name); printf "FAIL %s.%s: %s\n", s, name, last; next }
/^#/ { last = $0; sub(/^# */, "", last); printf "  %s\n", $0; next }
