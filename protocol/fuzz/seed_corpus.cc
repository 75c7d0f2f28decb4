// Writes a seed corpus for the fuzz targets: a valid encoding of every
// request and response at every version, from the generated randomize().
// Valid seeds get the fuzzer past the header checks at once.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "protocol/header.h"
#include "protocol/messages/all_apis.h"
#include "protocol/records/batch_builder.h"
#include "protocol/records/compression.h"

using namespace runnel::protocol;

namespace {

void write_file(const std::filesystem::path& p, const Bytes& b) {
  std::ofstream(p, std::ios::binary).write(reinterpret_cast<const char*>(b.data()), b.size());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: seed_corpus REQUEST_DIR RESPONSE_DIR RECORD_BATCH_DIR\n");
    return 2;
  }
  std::filesystem::path req_dir = argv[1], resp_dir = argv[2], batch_dir = argv[3];
  for (auto& d : {req_dir, resp_dir, batch_dir}) std::filesystem::create_directories(d);
  Randomizer rnd(1);
  for_each_api([&](auto api) {
    using Api = decltype(api);
    for (int16_t v = Api::min_version; v <= Api::max_version; ++v) {
      std::string stem = std::to_string(Api::key) + "_" + std::to_string(v);
      {
        Bytes out;
        Writer w(out);
        RequestHeader h{Api::key, v, 7, "seed", {}};
        h.encode(w, request_header_version(Api::is_flexible(v)));
        typename Api::Request req;
        req.randomize(rnd, v);
        req.encode(w, v);
        write_file(req_dir / stem, out);
      }
      {
        Bytes out;
        Writer w(out);
        w.i16(Api::key);
        w.i16(v);
        ResponseHeader h{7, {}};
        h.encode(w, response_header_version(Api::key, Api::is_flexible(v)));
        typename Api::Response resp;
        resp.randomize(rnd, v);
        resp.encode(w, v);
        write_file(resp_dir / stem, out);
      }
    }
  });
  // A small batch in every codec, with keys, values and headers.
  using namespace runnel::protocol::records;
  std::string key = "key", value = "value-value-value", hkey = "h";
  std::vector<Record> records(3);
  for (int i = 0; i < 3; ++i) {
    records[i].offset_delta = i;
    records[i].timestamp_delta = i * 10;
    records[i].key = ByteView(reinterpret_cast<const uint8_t*>(key.data()), key.size());
    records[i].value = ByteView(reinterpret_cast<const uint8_t*>(value.data()), value.size());
    records[i].headers.push_back({hkey, records[i].value});
  }
  for (auto codec : {Compression::none, Compression::gzip, Compression::snappy, Compression::lz4, Compression::zstd}) {
    BatchSpec spec;
    spec.compression = codec;
    spec.base_timestamp = 1700000000000;
    spec.producer_id = 5;
    spec.producer_epoch = 0;
    spec.base_sequence = 0;
    write_file(batch_dir / compression_name(codec), build_batch(spec, records));
  }
  return 0;
}
