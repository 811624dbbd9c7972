heapdump stats -q data/dumps/edge_memprof.json --by class --top 0
