// simdjson_stats.cpp - the reference point for heapdump's scanner speed:
// simdjson's On-Demand parser over the same dump, doing the same job as
// `heapdump stats` by type (count and memsize per type). Built and run by
// tests/bench/bench.sh only; needs Debian's libsimdjson-dev. It requires
// every line to be valid JSON, which generated benchmark dumps are.
#include <simdjson.h>

#include <cstdio>
#include <map>
#include <string>

int main(int argc, char **argv)
{
	if (argc != 2) {
		std::fprintf(stderr, "usage: simdjson_stats DUMP\n");
		return 2;
	}
	simdjson::padded_string json;
	if (simdjson::padded_string::load(argv[1]).get(json)) {
		std::fprintf(stderr, "cannot load %s\n", argv[1]);
		return 1;
	}
	simdjson::ondemand::parser parser;
	simdjson::ondemand::document_stream docs;
	if (parser.iterate_many(json, 16 << 20).get(docs)) {
		std::fprintf(stderr, "iterate_many failed\n");
		return 1;
	}
	std::map<std::string, std::pair<uint64_t, uint64_t>> by_type;
	uint64_t objects = 0, bad = 0;
	for (auto doc : docs) {
		simdjson::ondemand::object obj;
		if (doc.get_object().get(obj)) {
			bad++;
			continue;
		}
		std::string_view type;
		uint64_t memsize = 0;
		for (auto field : obj) {
			std::string_view key;
			if (field.unescaped_key().get(key))
				break;
			if (key == "type") {
				if (field.value().get_string().get(type))
					bad++;
			} else if (key == "memsize") {
				if (field.value().get_uint64().get(memsize))
					bad++;
			}
		}
		auto &e = by_type[std::string(type)];
		e.first++;
		e.second += memsize;
		objects++;
	}
	for (auto &kv : by_type)
		std::printf("%s\t%llu\t%llu\n", kv.first.c_str(),
			    (unsigned long long)kv.second.first,
			    (unsigned long long)kv.second.second);
	std::fprintf(stderr, "%llu records, %llu bad\n",
		     (unsigned long long)objects, (unsigned long long)bad);
	return 0;
}
