// libFuzzer target: any bytes as a response frame body. The first four bytes
// name the API key and version (responses do not carry them on the wire).
#include "protocol/fuzz/frame_fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  runnel::protocol::fuzz::fuzz_frame<false>(data, size);
  return 0;
}
