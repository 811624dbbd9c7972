#!/bin/sh
# tests/ext/middleware.sh - HeapDump::Middleware in a real Rack server:
# Debian's rack 2.2 (ruby-rack) and webrick (ruby-webrick), pure Ruby,
# put on the load path of every Ruby of RUBIES; WEBrick on 127.0.0.1,
# real HTTP requests (middleware_test.rb, middleware_app.rb).
SUITE=ext/middleware
. "$(dirname "$0")/lib.sh"
# the Debian packages' lib directories, as Debian's ruby finds them
libdir() {
	/usr/bin/ruby -e 'print Gem::Specification.find_by_name(ARGV[0]).full_require_paths.first' "$1" 2>/dev/null
}
RACK_LIB=$(libdir rack)
WEBRICK_LIB=$(libdir webrick)
if [ ! -f "$RACK_LIB/rack.rb" ]; then
	notok needs-rack "rack is missing: apt-get install ruby-rack (make deps)"
	exit 1
fi
if [ ! -f "$WEBRICK_LIB/webrick.rb" ]; then
	notok needs-webrick "webrick is missing: apt-get install ruby-webrick (make deps)"
	exit 1
fi
RUBYLIB="$RUBYLIB:$RACK_LIB:$WEBRICK_LIB"
# 4.0 made logger a bundled gem, which the native trees leave out: the
# tests give that Ruby Debian's copy (pure Ruby, libruby3.1)
if ! ruby -e 'require "logger"' 2>/dev/null; then
	lf=$(/usr/bin/ruby -rlogger -e 'print $LOADED_FEATURES.grep(%r{/logger\.rb\z}).first' 2>/dev/null)
	if [ ! -f "$lf" ]; then
		notok needs-logger "this Ruby has no logger and Debian's ruby gives none: apt-get install ruby"
		exit 1
	fi
	mkdir "$TMP/logger-lib"
	ln -s "$lf" "${lf%.rb}" "$TMP/logger-lib/"
	RUBYLIB="$RUBYLIB:$TMP/logger-lib"
fi
export RUBYLIB
SUITE=$SUITE ruby "$TOP/tests/ext/middleware_test.rb" "$TMP" 2>"$TMP/rb.err"
rc=$?
[ $rc -eq 0 ] || notok ruby-suite "middleware_test.rb exited $rc: $(tail -c 600 "$TMP/rb.err")"
check no-warnings "" "$(grep -i 'warn' "$TMP/rb.err" | head -3)"

# the middleware example of heapdump-ruby(3), as printed, serving real requests
awk '/run by tests\/ext\/middleware.sh/ { on = 1; next }
	on && /^\.Bd/ { inblock = 1; next }
	inblock && /^\.Ed/ { exit }
	inblock { print }' "$TOP/man/heapdump-ruby.3" |
	sed -e 's/\\(dq/"/g' -e 's/\\e/\\/g' -e 's/\\&//g' >"$TMP/example.rb"
site=$(grep -n 'map(&:to_s)' "$TMP/example.rb" | cut -d: -f1)
port=$(ruby -rsocket -e 's = TCPServer.new("127.0.0.1", 0); print s.addr[1]; s.close')
PORT=$port ruby "$TMP/example.rb" 2>"$TMP/example.err" >/dev/null &
server=$!
got=""
for _ in $(seq 1 100); do
	got=$(ruby -rnet/http -e 'print Net::HTTP.get(URI(ARGV[0]))' "http://127.0.0.1:$port/users" 2>/dev/null) && break
	sleep 0.1
done
kill "$server" 2>/dev/null
wait "$server" 2>/dev/null
check man-example/serves 1000 "$got"
check_grep man-example/logs-the-site "^heapdump: GET /users 200 allocated [0-9]+ objects at [0-9]+ sites; top 5: 1000 $TMP/example.rb:$site:String, " "$TMP/example.err"
exit 0
