// Writes a seed corpus for the fuzz targets: a valid encoding of every
// request and response at every version, from the generated randomize().
// Valid seeds get the fuzzer past the header checks at once.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "protocol/header.h"
#include "protocol/messages/all_apis.h"

using namespace runnel::protocol;

namespace {

void write_file(const std::filesystem::path& p, const Bytes& b) {
  std::ofstream(p, std::ios::binary).write(reinterpret_cast<const char*>(b.data()), b.size());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: seed_corpus REQUEST_DIR RESPONSE_DIR\n");
    return 2;
  }
  std::filesystem::path req_dir = argv[1], resp_dir = argv[2];
  std::filesystem::create_directories(req_dir);
  std::filesystem::create_directories(resp_dir);
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
  return 0;
}
