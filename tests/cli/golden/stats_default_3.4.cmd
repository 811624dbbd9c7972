heapdump stats data/dumps/ok_ruby3.4_traced.json --top 12
