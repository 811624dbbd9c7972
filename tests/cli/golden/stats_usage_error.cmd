heapdump stats --by nothing data/dumps/edge_empty.json 2>&1
