// One record inside a RecordBatch v2 (DefaultRecord.java).
//
//   length          varint  bytes after this field
//   attributes      int8    unused, written as 0
//   timestampDelta  varlong from the batch's baseTimestamp
//   offsetDelta     varint  from the batch's baseOffset
//   keyLength       varint  -1 = null key
//   key             bytes
//   valueLength     varint  -1 = null value
//   value           bytes
//   headerCount     varint
//   headers         headerKeyLength varint, headerKey UTF-8 (never null),
//                   headerValueLength varint (-1 = null), headerValue
//
// Varints are zigzag-encoded like protobuf's sint32/sint64.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "protocol/codec/reader.h"
#include "protocol/codec/types.h"

namespace runnel::protocol::records {

// Decoded records point into the bytes they were read from: they are valid
// only while those bytes are.
struct RecordHeader {
  std::string_view key;
  std::optional<ByteView> value;  // nullopt = null
};

struct Record {
  int8_t attributes = 0;
  int64_t timestamp_delta = 0;
  int32_t offset_delta = 0;
  std::optional<ByteView> key;    // nullopt = null
  std::optional<ByteView> value;  // nullopt = null (a tombstone)
  std::vector<RecordHeader> headers;
};

// Compares contents, not addresses.
bool operator==(const RecordHeader& a, const RecordHeader& b);
bool operator==(const Record& a, const Record& b);

// Bytes the record takes on the wire, its length prefix included.
size_t record_size(const Record& record);

// Appends the record, length prefix first.
void write_record(const Record& record, Bytes& out);

// Reads one record, length prefix first, from `in`. Every length is checked
// against the bytes that remain, and the fields must use exactly the bytes
// the length prefix claims. On malformed input, fails `in` (its error() says
// why) and returns nullopt.
std::optional<Record> read_record(Reader& in);

}  // namespace runnel::protocol::records
