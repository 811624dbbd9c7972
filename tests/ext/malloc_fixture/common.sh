# tests/ext/malloc_fixture/common.sh - shared by malloc.sh and malloc_stress.sh
# (sourced after lib.sh; run.sh runs neither lib.sh nor this file as a
# suite): the tracker ($MLIB, the gem's build beside the extension, as
# HeapDump.malloc_library_path finds it), the fixture extension HDMTest
# built for this Ruby (tests/ext/malloc_fixture), and helpers over
# snapshots (jq).
MLIB=$EXT/libheapdump-malloc.so
if [ ! -f "$MLIB" ]; then
	notok build "$MLIB is missing: make ext RUBIES=$HD_RUBY builds it beside the extension"
	exit 1
fi
needs jq jq || exit 1

# fixture: HDMTest for this Ruby, in $TMP/fx (about 2 s of mkmf)
fixture() {
	mkdir -p "$TMP/fx" && (cd "$TMP/fx" && ruby "$TOP/tests/ext/malloc_fixture/extconf.rb" >mkmf.out 2>&1 &&
		MAKEFLAGS= make V=0 >>mkmf.out 2>&1) || {
		notok fixture "cannot build tests/ext/malloc_fixture: $(tail -c 400 "$TMP/fx/mkmf.out")"
		exit 1
	}
	RUBYLIB="$TMP/fx:$RUBYLIB"
	export RUBYLIB
}

# traced DIR CMD...: CMD under the tracker, snapshots into DIR (made),
# at most 60 s; rc its exit code, stderr in DIR.err
traced() {
	traced_dir=$1
	shift
	mkdir -p "$traced_dir"
	timeout 60 env LD_PRELOAD="$MLIB" HEAPDUMP_MALLOC_DIR="$traced_dir" "$@" >"$traced_dir.out" 2>"$traced_dir.err"
	rc=$?
}

# exit_snap DIR: the exit snapshot of the Ruby process in DIR (the one
# with a "ruby" in its header; an exit snapshot is written once per process)
exit_snap() {
	for f in "$1"/heapdump-malloc-*.ndjson; do
		[ -f "$f" ] || continue
		head -1 "$f" | jq -e 'select(.reason == "exit" and .ruby != null)' >/dev/null 2>&1 && echo "$f"
	done | head -1
}

# site_field FILE SITE FIELD: FIELD of the site line of SITE (empty: none)
site_field() {
	jq -r --arg s "$2" --arg f "$3" 'select(.type == "site" and .site == $s) | .[$f]' "$1"
}

# leaked_field FILE SITE FIELD: of the leaked line of SITE
leaked_field() {
	jq -r --arg s "$2" --arg f "$3" 'select(.type == "leaked" and .site == $s) | .[$f]' "$1"
}
