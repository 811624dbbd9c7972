heapdump replace-class data/dumps/ok_ruby3.4_since.json | head -40
