#!/bin/sh
# make fuzz: builds each libFuzzer target with clang and runs it for a
# while, seeded by its committed corpus. New finds go to
# build/fuzz/corpus/NAME and crashes to build/fuzz/NAME-crash-*, never
# into tests/fuzz/corpus: keep what adds coverage with
#   build/fuzz/fuzz_NAME -merge=1 -use_counters=0 \
#       tests/fuzz/corpus/NAME build/fuzz/corpus/NAME
# and a fixed crasher under a name saying what it was.
# usage: run.sh CLANG SECONDS
set -eu
cc=${1:-clang}
secs=${2:-60}
top=$(cd "$(dirname "$0")/../.." && pwd)
out="$top/build/fuzz"
mkdir -p "$out"
for src in "$top"/tests/fuzz/fuzz_*.c; do
	t=$(basename "$src" .c)
	name=${t#fuzz_}
	echo "fuzz: building $t"
	$cc -g -O1 -std=c99 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE \
		-DHD_NO_MMAP -fsanitize=fuzzer,address,undefined \
		-fno-sanitize-recover=all \
		-DHD_SQLITE_SONAME='"libsqlite3.so.0"' \
		-I"$top/lib" -o "$out/$t" "$src" "$top"/lib/*.c "$top"/lib/util/*.c -lz -lm
	mkdir -p "$out/corpus/$name"
	echo "fuzz: running $t for ${secs}s"
	"$out/$t" -max_total_time="$secs" -max_len=65536 \
		-artifact_prefix="$out/$name-" \
		"$out/corpus/$name" "$top/tests/fuzz/corpus/$name" 2>&1 | tail -3
done
