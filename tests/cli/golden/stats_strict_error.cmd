heapdump stats --strict data/dumps/bad_raw_quote_file.json 2>&1
