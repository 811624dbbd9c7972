heapdump stats data/dumps/ok_ruby4.0_traced.json --by location,class --top 10
