heapdump stats data/dumps/ok_ruby3.3_since.json --format json --by gem,method
