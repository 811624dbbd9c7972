heapdump stats data/dumps/ok_ruby3.2_untraced.json --by imemo --sort memsize --format tsv --top 0
