heapdump --help
