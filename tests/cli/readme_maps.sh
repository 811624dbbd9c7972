#!/bin/sh
# readme_maps.sh - each folder's README opens with a map (issue 38): a
# table whose first column names files. Every file of lib/, lib/util/,
# cli/, cli/serve/ and src/ (and src/lib/'s Ruby) has a row in its
# folder's README, and every file a row names exists. A name may be a
# pattern (`cmd_<name>.c`) or a folder (`web/`).
. "$(dirname "$0")/../lib.sh"

# names DIR PREFIX: the entries of DIR as the README names them (PREFIX
# before each): files, and folders and links as NAME/
names() {
	[ -d "$TOP/$1" ] || return 0
	for p in "$TOP/$1"/* "$TOP/$1"/.[!.]*; do
		[ -e "$p" ] || [ -L "$p" ] || continue
		n=${p##*/}
		[ "$n" = README.md ] && continue
		if [ -d "$p" ] || [ -L "$p" ]; then
			echo "$2$n/"
		else
			echo "$2$n"
		fi
	done
}

# rows README: the names in the first column of the README's tables, one
# a line
rows() {
	awk -F'|' '/^\|/ && !/^\| *-+/ { print $2 }' "$1" |
		grep -o '`[^`]*`' | tr -d '`' | sort -u
}

# unmapped NAMES ROWS: the names no row covers (exactly, by pattern, or
# under a folder's row)
unmapped() {
	awk 'NR == FNR { r[$0] = 1; next }
	function covered(n,   t, re) {
		if (n in r) return 1
		for (t in r) {
			re = t
			gsub(/[.]/, "[.]", re)
			gsub(/<[^>]*>/, "[^/]*", re)
			if (n ~ ("^" re "$")) return 1
			if (t ~ /\/$/ && index(n, t) == 1) return 1
		}
		return 0
	}
	!covered($0) { printf "%s ", $0 }' "$2" "$1"
}

# stale ROWS DIR: the names of rows that are no file of DIR
stale() {
	sdir=$2
	while read -r t; do
		case $t in
		*/ | *.*) ;;
		*) continue ;; # not a file name (`hd_*`, `man 5 ...`)
		esac
		case $t in *' '*) continue ;; esac
		pat=$(printf '%s' "$t" | sed 's/<[^>]*>/*/g; s,/$,,')
		# shellcheck disable=SC2086
		set -- "$TOP/$sdir"/$pat
		[ -e "$1" ] || [ -L "$1" ] || printf '%s ' "$t"
	done <"$1"
}

for spec in lib:lib,util cli:cli,serve src:src,lib; do
	dir=${spec%%:*}
	readme=$TOP/$dir/README.md
	if [ ! -f "$readme" ]; then
		notok "$dir/readme" "no $dir/README.md"
		continue
	fi
	# the map first: a table within the first 15 lines
	check "$dir/opens-with-a-table" yes \
		"$(awk '/^\|/ { print "yes"; exit } NR > 15 { print "no"; exit }' "$readme")"
	rows "$readme" >"$TMP/$dir.rows"
	: >"$TMP/$dir.names"
	names "$dir" "" >>"$TMP/$dir.names"
	sub=${spec#*,}
	names "$dir/$sub" "$sub/" >>"$TMP/$dir.names"
	# src/lib/heapdump/*.rb: the gem's Ruby, one level further
	[ "$dir" = src ] && names src/lib/heapdump lib/heapdump/ >>"$TMP/$dir.names"
	# the folders whose files are mapped one by one need no row
	grep -vx -e "$sub/" -e lib/heapdump/ "$TMP/$dir.names" >"$TMP/$dir.files"
	check "$dir/every-file-has-a-row" "" "$(unmapped "$TMP/$dir.files" "$TMP/$dir.rows")"
	check "$dir/every-row-is-a-file" "" "$(stale "$TMP/$dir.rows" "$dir")"
done
