heapdump stats data/dumps/bad_escape_garbage_split.json --by type 2>&1
