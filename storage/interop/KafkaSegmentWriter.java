// Writes one log segment with Kafka's own code (LogSegment, MemoryRecords),
// for Runnel to read: several batches with keys, headers, a tombstone, gzip
// and uncompressed, and index entries every 256 bytes. Prints what it wrote,
// one record a line: "<offset> <key> <value>" ("null" for a null value).
//
//   java KafkaSegmentWriter <partition dir>
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.MemoryRecordsBuilder;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.storage.internals.log.LogConfig;
import org.apache.kafka.storage.internals.log.LogSegment;

public class KafkaSegmentWriter {
  public static void main(String[] args) throws Exception {
    File dir = new File(args[0]);
    dir.mkdirs();
    Map<String, Object> props = new HashMap<>();
    props.put("index.interval.bytes", "256");
    LogConfig config = new LogConfig(props);
    LogSegment segment = LogSegment.open(dir, 0L, config, Time.SYSTEM, false, 0, false, "");
    long offset = 0;
    long ts = 1700000000000L;
    StringBuilder expected = new StringBuilder();
    for (int b = 0; b < 12; b++) {
      Compression codec = b % 2 == 0 ? Compression.gzip().build() : Compression.NONE;
      MemoryRecordsBuilder builder = MemoryRecords.builder(java.nio.ByteBuffer.allocate(1 << 16), RecordBatch.CURRENT_MAGIC_VALUE,
          codec, TimestampType.CREATE_TIME, offset, ts + b * 1000L, RecordBatch.NO_PRODUCER_ID,
          RecordBatch.NO_PRODUCER_EPOCH, RecordBatch.NO_SEQUENCE, false, 0);
      int n = 1 + b % 4;
      for (int r = 0; r < n; r++) {
        String key = "key-" + b + "-" + r;
        String value = (b == 5 && r == 0) ? null : "value-" + b + "-" + r + "-" + "x".repeat(40 * r);
        Header[] headers = {new RecordHeader("h" + r, ("hv" + b).getBytes(StandardCharsets.UTF_8))};
        builder.appendWithOffset(offset, ts + b * 1000L + r, key.getBytes(StandardCharsets.UTF_8),
            value == null ? null : value.getBytes(StandardCharsets.UTF_8), headers);
        expected.append(offset).append(' ').append(key).append(' ').append(value == null ? "null" : value).append('\n');
        offset++;
      }
      MemoryRecords records = builder.build();
      segment.append(offset - 1, records);
    }
    segment.flush();
    segment.onBecomeInactiveSegment();
    segment.close();
    System.out.print(expected);
  }
}
