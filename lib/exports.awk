# exports.awk - the names of the functions lib/heapdump.h marks HD_API,
# one a line: the export list of libheapdump.so (the Makefile writes the
# linker's version script from it). A declaration runs from HD_API to
# its ';'; its name is the identifier before the first '('.
/^HD_API[ \t]/ { decl = ""; on = 1 }
on {
	decl = decl " " $0
	if (index($0, ";")) {
		on = 0
		sub(/\(.*/, "", decl)
		n = split(decl, w, /[^A-Za-z0-9_]+/)
		while (n > 0 && w[n] == "")
			n--
		print w[n]
	}
}
