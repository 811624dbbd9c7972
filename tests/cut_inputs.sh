# cut_inputs DIR: from DIR/mixed.json, the inputs on which a dump split
# into parts (stats -j, index -j) must read as one reader reads: CRLF
# line ends (crlf), no newline at the end (nonl), a last record cut
# short (cut), one and two records and one byte and nothing (one, two,
# brace, empty), one 8 MB line between small ones (giant), garbage
# before the first record (junkfirst), a not-a-dump (nodump), more
# skipped lines than records (mostly), more problems than a part keeps
# (many). Sourced by tests/cli/parallel.sh and tests/cli/index_par.sh.
cut_inputs() {
	cut_dir=$1
	sed 's/$/\r/' "$cut_dir/mixed.json" >"$cut_dir/crlf.json"
	head -c -1 "$cut_dir/mixed.json" >"$cut_dir/nonl.json"
	head -c -9 "$cut_dir/mixed.json" >"$cut_dir/cut.json"
	printf '{"address":"0x1", "type":"OBJECT", "memsize":1}\n' >"$cut_dir/one.json"
	printf '{"address":"0x1", "type":"OBJECT"}\n{"address":"0x2", "type":"OBJECT"}' >"$cut_dir/two.json"
	printf '{' >"$cut_dir/brace.json"
	: >"$cut_dir/empty.json"
	awk 'BEGIN {
		print "{\"type\":\"ROOT\", \"root\":\"vm\", \"references\":[\"0x1\"]}"
		printf "{\"address\":\"0x1\", \"type\":\"ARRAY\", \"references\":["
		for (i = 0; i < 450000; i++)
			printf "%s\"0x%x\"", i ? ", " : "", 65536 + i
		print "], \"memsize\":8}"
		print "{\"address\":\"0x2\", \"type\":\"STRING\", \"memsize\":40}"
	}' >"$cut_dir/giant.json"
	{ printf 'junk %s\n' 1 2 3; cat "$cut_dir/mixed.json"; } >"$cut_dir/junkfirst.json"
	awk 'BEGIN { for (i = 0; i < 200; i++) print "not json " i }' >"$cut_dir/nodump.json"
	{ cat "$cut_dir/one.json"; awk 'BEGIN { for (i = 0; i < 50; i++) print "x" i }'; } >"$cut_dir/mostly.json"
	awk 'BEGIN { for (i = 1; i <= 70000; i++) {
		printf "{\"address\":\"0x%x\", \"type\":\"OBJECT\", \"memsize\":1}\n", i
		print "bad " i } }' >"$cut_dir/many.json"
}
