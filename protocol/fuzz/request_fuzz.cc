// libFuzzer target: any bytes as a request frame body (header + request).
#include "protocol/fuzz/frame_fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  runnel::protocol::fuzz::fuzz_frame<true>(data, size);
  return 0;
}
