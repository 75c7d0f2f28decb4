// libFuzzer target: arbitrary bytes through the batch iterator, then every
// batch through validate_batch with the record walk and decompression on,
// under both the client and the log rules. Nothing may crash, hang or
// allocate past the decompression limit.
#include <cstddef>
#include <cstdint>

#include "protocol/records/batch_reader.h"
#include "protocol/records/validate.h"

using namespace runnel::protocol;
using namespace runnel::protocol::records;

namespace {

// Small enough that a bomb is caught quickly, big enough for real batches.
constexpr size_t kFuzzMaxDecompressed = 4u << 20;

void check(ByteView batch) {
  for (bool client : {true, false}) {
    ValidateOptions options;
    options.from_client = client;
    options.walk_records = true;
    options.max_decompressed_bytes = kFuzzMaxDecompressed;
    validate_batch(batch, options);
  }
  // Reading records does not need a valid CRC: the log reader relies on
  // that, so exercise it directly too.
  BatchRecordReader reader(batch, kFuzzMaxDecompressed);
  Record record;
  while (reader.next(record)) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ByteView input(data, size);
  // The whole input as one batch (a Produce request's records)...
  check(input);
  // ...and as a run of batches (a segment or a Fetch response).
  BatchIterator it(input);
  while (auto batch = it.next()) check(batch->bytes);
  return 0;
}
