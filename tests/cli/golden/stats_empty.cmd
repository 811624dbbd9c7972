heapdump stats data/dumps/edge_empty.json 2>&1
