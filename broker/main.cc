// runnel: the broker (`runnel serve`) and its client subcommands.
#include <cstdio>
#include <cstring>

#include "protocol/messages/all_apis.h"

namespace {

int usage() {
  std::fprintf(stderr,
               "usage: runnel serve [server.properties] [--override key=value ...]\n"
               "       runnel apis      list the Kafka APIs and versions the codec speaks\n");
  return 2;
}

int list_apis() {
  runnel::protocol::for_each_api([](auto api) {
    using Api = decltype(api);
    std::printf("%3d %-28s v%d-%d", Api::key, Api::name, Api::min_version, Api::max_version);
    if (Api::flexible_from <= Api::max_version) std::printf("  flexible v%d+", Api::flexible_from);
    std::printf("\n");
  });
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return usage();
  if (std::strcmp(argv[1], "apis") == 0) return list_apis();
  if (std::strcmp(argv[1], "serve") == 0) {
    std::fprintf(stderr, "runnel: the broker core is not built yet (issue 4); the codec speaks:\n");
    list_apis();
    return 1;
  }
  return usage();
}
