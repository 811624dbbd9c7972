heapdump stats data/dumps/edge_empty.json
