#!/bin/sh
# tests/man/lint.sh - every manual page renders without a warning, reads
# as meant, and lists every option of its command.
#
#  man/lint/PAGE/groff     groff -ww -z -mandoc prints nothing
#  man/lint/PAGE/mandoc    mandoc -Tlint -W warning prints nothing (its
#                          style notes are not checked)
#  man/lint/PAGE/reads     tests/man/lint_man.py: no quote nested in a
#                          quote of its kind, no -column cell wider than
#                          its column
#  man/lint/PAGE/synopsis  every option of the command's table (its
#                          --help, made from it) is in the SYNOPSIS: its
#                          letter or its long name, a selection option as
#                          "Ar selection", a synonym ("the same as --top")
#                          as the option it stands for
# Each failure names the page and the line.
SUITE=man/lint
. "$(dirname "$0")/../lib.sh"
cd "$TOP" || exit 1
# count failures, so that 'make check-man' fails too
failures=0
notok() { failures=$((failures + 1)); echo "not ok - $SUITE/$1: $2"; }
needs groff groff
needs mandoc mandoc
needs python3 python3

set -- man/*.[1-9]
[ -f "$1" ] || { notok pages "no man/*.[1-9] page found"; exit 1; }
for page in "$@"; do
	name=${page#man/}
	groff -ww -z -mandoc "$page" >"$TMP/err" 2>&1
	if [ -s "$TMP/err" ]; then
		notok "$name/groff" "$(head -5 "$TMP/err" | tr '\n' ' ')"
	else
		ok "$name/groff"
	fi
	# mandoc also says when its database is stale: not about the page
	mandoc -Tlint -W warning "$page" 2>&1 | grep -v 'mandoc\.db' >"$TMP/err"
	if [ -s "$TMP/err" ]; then
		notok "$name/mandoc" "$(head -5 "$TMP/err" | tr '\n' ' ')"
	else
		ok "$name/mandoc"
	fi
	if python3 tests/man/lint_man.py "$page" >"$TMP/err" 2>&1; then
		ok "$name/reads"
	else
		notok "$name/reads" "$(head -5 "$TMP/err" | tr '\n' ' ')"
	fi
done

if [ ! -x "$HEAPDUMP" ]; then
	notok synopsis "$HEAPDUMP is not built: run make"
	exit 1
fi
# the options of a selection (CLI_SELECT_OPTS), shown as "Ar selection"
select_opts="--address --class --name --type --file --location --generation --from --via"
"$HEAPDUMP" --help 2>&1 | sed -n '/^commands:/,/^$/s/^  \([a-z][a-z-]*\) .*/\1/p' >"$TMP/cmds"
[ -s "$TMP/cmds" ] || notok synopsis "no command list in 'heapdump --help'"
while read -r cmd; do
	page=man/heapdump-$cmd.1
	[ -f "$page" ] || continue # check_man.sh says so
	start=$(grep -n '^\.Sh SYNOPSIS$' "$page" | cut -d: -f1)
	# the SYNOPSIS's flags: "Fl aq" gives -a and -q, "Fl \-strict" --strict
	sed -n '/^\.Sh SYNOPSIS$/,/^\.Sh /p' "$page" | sed 's/\\-/-/g' >"$TMP/syn"
	awk '{ for (i = 1; i < NF; i++) if ($i == "Fl" || $i == ".Fl") {
		w = $(i + 1)
		if (w ~ /^-/) print "-" w
		else for (k = 1; k <= length(w); k++) print "-" substr(w, k, 1)
	} }' "$TMP/syn" >"$TMP/flags"
	"$HEAPDUMP" "$cmd" --help >"$TMP/help" 2>&1 </dev/null
	missing=""
	# an option "the same as --X" is there when --X is
	sed -n 's/^ *--[a-z-]* .*the same as \(--[a-z][a-z-]*\).*/- \1/p
		s/^ *\(-[a-zA-Z]\), \(--[a-z][a-z-]*\).*/\1 \2/p
		s/^ *\(--[a-z][a-z-]*\).*/- \1/p' "$TMP/help" >"$TMP/opts"
	grep -v '^- ' "$TMP/opts" >"$TMP/pairs" # -n --top: its letter will do
	while read -r short long; do
		[ "$long" = --help ] && continue
		case " $select_opts " in *" $long "*)
			grep -q 'Ar .*selection' "$TMP/syn" || missing="$missing $long (Ar selection)"
			continue ;;
		esac
		grep -qx -e "$long" "$TMP/flags" && continue
		[ "$short" = - ] && short=$(awk -v l="$long" '$2 == l { print $1 }' "$TMP/pairs" | head -1)
		[ -n "$short" ] || short=-
		[ "$short" != - ] && grep -qx -e "$short" "$TMP/flags" && continue
		missing="$missing $long"
	done <"$TMP/opts"
	if [ -z "$missing" ]; then ok "heapdump-$cmd.1/synopsis"; else
		notok "heapdump-$cmd.1/synopsis" "$page:$start: SYNOPSIS lacks$missing"
	fi
done <"$TMP/cmds"
[ "$failures" -eq 0 ]
