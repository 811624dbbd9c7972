#!/bin/sh
# make demo: heapdump stats on a real dump shipped in data/ (Ruby 3.1,
# allocation tracing on), then the same dump indexed into a store.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
hd="$top/build/heapdump"
dump="$top/data/dumps/ok_ruby3.1_traced.json"
echo "\$ heapdump stats data/dumps/ok_ruby3.1_traced.json --top 10"
"$hd" stats "$dump" --top 10
echo
echo "\$ heapdump stats data/dumps/ok_ruby3.1_traced.json --by location,class --top 5"
"$hd" stats "$dump" --by location,class --top 5
