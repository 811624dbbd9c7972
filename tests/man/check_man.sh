#!/bin/sh
# tests/man/check_man.sh - the manual pages are clean and complete.
#
#  man/check/PAGE           groff -mdoc -ww prints nothing, neither with -z
#                           nor rendering to -Tascii (groff exits 0 even when
#                           it warns, so any byte on stderr fails the page)
#  man/check/PAGE/sections  the sections its manual section needs are there
#  man/check/commands/CMD   each command of 'heapdump --help' has its page and
#                           is listed in heapdump.1
#  man/check/PAGE/options   every option of 'heapdump CMD --help' has its
#                           item in the OPTIONS of heapdump-CMD.1
SUITE=man/check
. "$(dirname "$0")/../lib.sh"
cd "$TOP" || exit 1
# count failures, so that 'make check-man' fails too
failures=0
notok() { failures=$((failures + 1)); echo "not ok - $SUITE/$1: $2"; }
needs groff groff

set -- man/*.[1-9]
[ -f "$1" ] || { notok pages "no man/*.[1-9] page found"; exit 1; }

for page in "$@"; do
	name=${page#man/}
	: >"$TMP/err"
	groff -mdoc -ww -z "$page" 2>>"$TMP/err"
	rc1=$?
	groff -mdoc -ww -Tascii "$page" >/dev/null 2>>"$TMP/err"
	rc2=$?
	if [ $rc1 -eq 0 ] && [ $rc2 -eq 0 ] && [ ! -s "$TMP/err" ]; then
		ok "$name"
	else
		notok "$name" "$(sort -u "$TMP/err" | tr '\n' ' ' | head -c 600)(exit $rc1/$rc2)"
	fi

	case $name in
	heapdump.1) want="NAME SYNOPSIS DESCRIPTION COMMANDS EXIT_STATUS EXAMPLES SEE_ALSO" ;;
	heapdump-stats.1) want="NAME SYNOPSIS DESCRIPTION OPTIONS OUTPUT EXIT_STATUS EXAMPLES SEE_ALSO" ;;
	*.1) want="NAME SYNOPSIS DESCRIPTION OPTIONS EXIT_STATUS EXAMPLES SEE_ALSO" ;;
	*.3) want="NAME SYNOPSIS DESCRIPTION RETURN_VALUES EXAMPLES SEE_ALSO" ;;
	*) want="NAME DESCRIPTION SEE_ALSO" ;;
	esac
	missing=""
	for s in $want; do
		s=$(printf '%s' "$s" | tr '_' ' ')
		grep -q "^\.Sh $s\$" "$page" || missing="$missing, $s"
	done
	if [ -z "$missing" ]; then ok "$name/sections"; else
		notok "$name/sections" "missing .Sh ${missing#, }"
	fi
done

if [ ! -x "$HEAPDUMP" ]; then
	notok commands "$HEAPDUMP is not built: run make"
	exit 1
fi

# the commands, from the program's own list
"$HEAPDUMP" --help 2>&1 | sed -n '/^commands:/,/^$/s/^  \([a-z][a-z-]*\) .*/\1/p' >"$TMP/cmds"
[ -s "$TMP/cmds" ] || notok commands "no command list in 'heapdump --help'"
while read -r cmd; do
	case $cmd in
	help | version)
		if grep -q "^\.It Cm $cmd\( \|\$\)" man/heapdump.1; then
			ok "commands/$cmd"
		else
			notok "commands/$cmd" "not listed in man/heapdump.1 (.It Cm $cmd)"
		fi
		continue ;;
	esac
	page=man/heapdump-$cmd.1
	if [ ! -f "$page" ]; then
		notok "commands/$cmd" "$page is missing"
		continue
	fi
	if ! grep -q "^\.It Cm $cmd\( \|\$\)" man/heapdump.1; then
		notok "commands/$cmd" "not listed in man/heapdump.1 (.It Cm $cmd)"
		continue
	fi
	ok "commands/$cmd"

	# every option of its --help, long and short, has an item (.It Fl ...)
	# in the page's OPTIONS section
	"$HEAPDUMP" "$cmd" --help >"$TMP/help" 2>&1 </dev/null
	sed -n '/^\.Sh OPTIONS$/,/^\.Sh /p' "$page" | grep '^\.It ' |
		sed 's/\\-/-/g' |
		awk '{ for (i = 1; i < NF; i++) if ($i == "Fl") print "-" $(i + 1) }' \
		>"$TMP/documented"
	missing=""
	for o in $(sed -n 's/^ *\(-[a-zA-Z]\), --\([a-z][a-z-]*\).*/\1 --\2/p; s/^ *\(--[a-z][a-z-]*\).*/\1/p' "$TMP/help"); do
		grep -qx -e "$o" "$TMP/documented" || missing="$missing $o"
	done
	if [ -z "$missing" ]; then ok "heapdump-$cmd.1/options"; else
		notok "heapdump-$cmd.1/options" "undocumented:$missing"
	fi
done <"$TMP/cmds"
[ "$failures" -eq 0 ]
