// Compatibility-matrix driver for Sarama (github.com/IBM/sarama): runs every
// scenario of compat-tests/matrix/scenarios.json against one broker and
// prints one JSON result line per scenario on stdout (contract:
// compat-tests/matrix/README.md). The same code runs against Runnel and
// Apache Kafka; it never asks which.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/IBM/sarama"
)

type env struct {
	bootstrap string
	seeds     []string         // --bootstrap split at commas
	brokers   map[int32]string // node id -> host:port of every broker ($MATRIX_BROKERS)
	prefix    string
	client    sarama.Client
	admin     sarama.ClusterAdmin
	// stage names the blocking step a scenario is in, for a timeout's detail.
	stage atomic.Value
}

// brokersFromEnv reads $MATRIX_BROKERS ("1@host:port,2@host:port,..."); without
// it the one broker of --bootstrap is node 1.
func brokersFromEnv(seeds []string) map[int32]string {
	spec := os.Getenv("MATRIX_BROKERS")
	if spec == "" {
		spec = "1@" + seeds[0]
	}
	out := map[int32]string{}
	for _, entry := range strings.Split(spec, ",") {
		id, addr, _ := strings.Cut(entry, "@")
		n, err := strconv.Atoi(id)
		if err != nil {
			log.Fatalf("MATRIX_BROKERS entry %q: %v", entry, err)
		}
		out[int32(n)] = addr
	}
	return out
}

func (e *env) at(stage string) { e.stage.Store(stage) }

func (e *env) name(what string) string { return e.prefix + "-" + what }

// newConfig is the configuration every Sarama object here starts from.
func newConfig() *sarama.Config {
	c := sarama.NewConfig()
	// Sarama sends ApiVersions on every connection (ApiVersionsRequest is on
	// by default) and clamps each request to the broker's advertised range
	// (restrictApiVersion). Version is the ceiling it builds requests from,
	// so MaxVersion (the newest Kafka release this Sarama knows) lets the
	// negotiation pick, per API, the newest version both sides speak; the
	// default (2.8) would pin old request versions whatever the broker offers.
	c.Version = sarama.MaxVersion
	c.ApiVersionsRequest = true
	c.ClientID = "runnel-matrix-sarama"
	c.Net.DialTimeout = 10 * time.Second
	c.Net.ReadTimeout = 15 * time.Second
	c.Net.WriteTimeout = 10 * time.Second
	c.Admin.Timeout = 10 * time.Second
	c.Producer.Return.Successes = true
	c.Producer.Return.Errors = true
	c.Consumer.Return.Errors = true
	c.Consumer.Offsets.Initial = sarama.OffsetOldest
	c.Consumer.Offsets.AutoCommit.Enable = false
	// Members notice a rebalance at their next heartbeat; a short interval
	// keeps the group scenarios quick without changing what they check.
	c.Consumer.Group.Heartbeat.Interval = 500 * time.Millisecond
	if secure != nil {
		secure(c) // a security column's TLS and SASL (security.go)
	}
	return c
}

type scenario struct {
	id      string
	timeout time.Duration
	run     func(ctx context.Context, e *env) error
}

type result struct {
	Scenario string `json:"scenario"`
	Status   string `json:"status"`
	Detail   string `json:"detail"`
}

func main() {
	bootstrap := flag.String("bootstrap", "", "host:port of the broker")
	security := flag.String("security", "", "JSON file of the security columns: run only those (security.go)")
	flag.Parse()
	if *bootstrap == "" {
		log.Fatal("--bootstrap is required")
	}
	log.SetOutput(os.Stderr)
	if os.Getenv("SARAMA_LOG") != "" {
		// Sarama's own protocol-level log, for diagnosing a failing scenario.
		sarama.Logger = log.New(os.Stderr, "[sarama] ", log.LstdFlags|log.Lmicroseconds)
	}
	suffix := make([]byte, 4)
	_, _ = rand.Read(suffix)
	e := &env{bootstrap: *bootstrap, seeds: strings.Split(*bootstrap, ","), prefix: "sarama-" + hex.EncodeToString(suffix)}
	e.brokers = brokersFromEnv(e.seeds)
	list := scenarios()
	if only := os.Getenv("MATRIX_ONLY"); only != "" { // run_matrix.py --only (debugging)
		var kept []scenario
		for _, s := range list {
			if strings.Contains(","+only+",", ","+s.id+",") {
				kept = append(kept, s)
			}
		}
		list = kept
	}
	var err error
	if *security != "" {
		// Each security scenario makes its clients for its own listener.
		if list, err = securityScenarios(*security); err != nil {
			log.Fatalf("--security: %v", err)
		}
	} else {
		if e.client, err = sarama.NewClient(e.seeds, newConfig()); err != nil {
			log.Fatalf("client: %v", err)
		}
		if e.admin, err = sarama.NewClusterAdminFromClient(e.client); err != nil {
			log.Fatalf("cluster admin: %v", err)
		}
		defer e.admin.Close()
	}

	out := json.NewEncoder(os.Stdout)
	for _, s := range list {
		status, detail := runOne(s, e)
		log.Printf("%s: %s %s", s.id, status, detail)
		_ = out.Encode(result{s.id, status, detail})
	}
}

// errUnsupported marks a scenario the client cannot express here.
type errUnsupported struct{ why string }

func (u errUnsupported) Error() string { return u.why }

// okDetail is a pass that says more than the time it took.
type okDetail struct{ detail string }

func (d okDetail) Error() string { return d.detail }

// runOne runs a scenario in its own goroutine: Sarama's calls take no
// context, so a stuck call is abandoned at the timeout and the next
// scenario goes on.
func runOne(s scenario, e *env) (string, string) {
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	done := make(chan error, 1)
	start := time.Now()
	e.at("starting")
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- fmt.Errorf("panic: %v", r)
			}
		}()
		done <- s.run(ctx, e)
	}()
	select {
	case err := <-done:
		if u, ok := err.(errUnsupported); ok {
			return "unsupported", u.why
		}
		if d, ok := err.(okDetail); ok {
			return "pass", d.detail
		}
		if err != nil {
			if ctx.Err() != nil {
				return "fail", fmt.Sprintf("timed out after %s: %v", s.timeout, err)
			}
			return "fail", err.Error()
		}
		return "pass", fmt.Sprintf("ok in %dms", time.Since(start).Milliseconds())
	case <-ctx.Done():
		// The scenario's bounded waits also see ctx end and say what they
		// were waiting for; give them a moment to.
		select {
		case err := <-done:
			if err != nil {
				return "fail", fmt.Sprintf("timed out after %s: %v", s.timeout, err)
			}
		case <-time.After(2 * time.Second):
		}
		return "fail", fmt.Sprintf("timed out after %s while %v", s.timeout, e.stage.Load())
	}
}

func scenarios() []scenario {
	t := 45 * time.Second
	return []scenario{
		{"metadata", t, scenarioMetadata},
		{"create_delete_topics", t, scenarioCreateDeleteTopics},
		{"produce_acks0", t, func(ctx context.Context, e *env) error {
			return scenarioProduceAcks(ctx, e, sarama.NoResponse, "acks0")
		}},
		{"produce_acks1", t, func(ctx context.Context, e *env) error {
			return scenarioProduceAcks(ctx, e, sarama.WaitForLocal, "acks1")
		}},
		{"produce_acksall", t, func(ctx context.Context, e *env) error {
			return scenarioProduceAcks(ctx, e, sarama.WaitForAll, "acksall")
		}},
		{"keys_headers_timestamps", t, scenarioKeysHeadersTimestamps},
		{"compression_gzip", t, func(ctx context.Context, e *env) error {
			return scenarioCompression(ctx, e, sarama.CompressionGZIP, "gzip")
		}},
		{"compression_snappy", t, func(ctx context.Context, e *env) error {
			return scenarioCompression(ctx, e, sarama.CompressionSnappy, "snappy")
		}},
		{"compression_lz4", t, func(ctx context.Context, e *env) error {
			return scenarioCompression(ctx, e, sarama.CompressionLZ4, "lz4")
		}},
		{"compression_zstd", t, func(ctx context.Context, e *env) error {
			return scenarioCompression(ctx, e, sarama.CompressionZSTD, "zstd")
		}},
		{"idempotent_produce", t, scenarioIdempotentProduce},
		// A fresh Kafka creates __transaction_state on the first InitProducerId.
		{"transactions", 60 * time.Second, scenarioTransactions},
		{"transactions_offsets", 60 * time.Second, scenarioTransactionsOffsets},
		// The first group scenario: a fresh Kafka creates and loads
		// __consumer_offsets on the first FindCoordinator, slow on a busy machine.
		{"consume_earliest", 60 * time.Second, scenarioConsumeEarliest},
		{"consume_latest", t, scenarioConsumeLatest},
		{"consume_timestamp", t, scenarioConsumeTimestamp},
		{"group_of_three", 120 * time.Second, scenarioGroupOfThree},
		{"offsets_resume", 60 * time.Second, scenarioOffsetsResume},
		{"admin_configs", t, scenarioAdminConfigs},
		{"admin_grow_partitions", t, scenarioAdminGrowPartitions},
		{"admin_groups", 60 * time.Second, scenarioAdminGroups},
		{"admin_delete_records", t, scenarioAdminDeleteRecords},
		{"leader_failover", 90 * time.Second, scenarioLeaderFailover},
	}
}

// ---- helpers ----

func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

func createTopic(ctx context.Context, e *env, topic string, partitions int32) error {
	e.at("creating topic " + topic)
	if err := e.admin.CreateTopic(topic, &sarama.TopicDetail{NumPartitions: partitions,
		ReplicationFactor: int16(len(e.brokers))}, false); err != nil {
		return fmt.Errorf("create topic %s: %w", topic, err)
	}
	return waitPartitions(ctx, e, topic, int(partitions))
}

// waitPartitions polls metadata until topic shows n led partitions: creation
// and growth are asynchronous in Kafka.
func waitPartitions(ctx context.Context, e *env, topic string, n int) error {
	last := ""
	for {
		mds, err := e.admin.DescribeTopics([]string{topic})
		if err == nil && len(mds) == 1 {
			md := mds[0]
			led := 0
			for _, p := range md.Partitions {
				if p.Leader >= 0 && p.Err == sarama.ErrNoError {
					led++
				}
			}
			if md.Err == sarama.ErrNoError && len(md.Partitions) == n && led == n {
				return nil
			}
			last = fmt.Sprintf("%d partitions (%d led), err %v", len(md.Partitions), led, md.Err)
		} else if err != nil {
			last = err.Error()
		}
		if err := sleep(ctx, 100*time.Millisecond); err != nil {
			return fmt.Errorf("topic %s never showed %d partitions (last: %s)", topic, n, last)
		}
	}
}

func values(prefix string, n int) []string {
	vs := make([]string, n)
	for i := range vs {
		vs[i] = fmt.Sprintf("%s-%03d", prefix, i)
	}
	return vs
}

// sendAll produces msgs with a SyncProducer configured by tune; Sarama sets
// each message's Offset from the broker's acknowledgement.
func sendAll(e *env, msgs []*sarama.ProducerMessage, tune func(*sarama.Config)) error {
	e.at("producing")
	c := newConfig()
	// Records a scenario reads back are acknowledged by every in-sync
	// replica: with acks=1 in a cluster the high watermark (what consumers,
	// ListOffsets and DeleteRecords see) may still lag the acknowledgement,
	// on Kafka as on Runnel. The acks scenarios set their own.
	c.Producer.RequiredAcks = sarama.WaitForAll
	if tune != nil {
		tune(c)
	}
	p, err := sarama.NewSyncProducer(e.seeds, c)
	if err != nil {
		return fmt.Errorf("producer: %w", err)
	}
	defer p.Close()
	if err := p.SendMessages(msgs); err != nil {
		return fmt.Errorf("produce: %w", err)
	}
	return nil
}

func messages(topic string, vals []string) []*sarama.ProducerMessage {
	msgs := make([]*sarama.ProducerMessage, len(vals))
	for i, v := range vals {
		msgs[i] = &sarama.ProducerMessage{Topic: topic, Partition: 0, Value: sarama.StringEncoder(v)}
	}
	return msgs
}

func checkAcked(msgs []*sarama.ProducerMessage) error {
	for i, m := range msgs {
		if m.Offset != int64(i) {
			return fmt.Errorf("record %d acknowledged at offset %d, want %d", i, m.Offset, i)
		}
	}
	return nil
}

// consumePartition reads n messages of topic's partition 0 from offset
// (an offset or sarama.OffsetOldest / OffsetNewest).
func consumePartition(ctx context.Context, e *env, topic string, offset int64, n int) ([]*sarama.ConsumerMessage, error) {
	e.at("consuming")
	c, err := sarama.NewConsumer(e.seeds, newConfig())
	if err != nil {
		return nil, err
	}
	defer c.Close()
	pc, err := c.ConsumePartition(topic, 0, offset)
	if err != nil {
		return nil, fmt.Errorf("consume partition: %w", err)
	}
	defer pc.Close()
	return readN(ctx, pc, n)
}

func readN(ctx context.Context, pc sarama.PartitionConsumer, n int) ([]*sarama.ConsumerMessage, error) {
	var got []*sarama.ConsumerMessage
	for len(got) < n {
		select {
		case m := <-pc.Messages():
			got = append(got, m)
		case err := <-pc.Errors():
			return got, fmt.Errorf("consume: %w", err)
		case <-ctx.Done():
			return got, fmt.Errorf("got %d of %d records before the deadline", len(got), n)
		}
	}
	return got, nil
}

func checkValues(got []*sarama.ConsumerMessage, want []string, first int64) error {
	if len(got) != len(want) {
		return fmt.Errorf("consumed %d records, want %d", len(got), len(want))
	}
	for i, m := range got {
		if string(m.Value) != want[i] {
			return fmt.Errorf("record %d: value %q, want %q", i, m.Value, want[i])
		}
		if m.Offset != first+int64(i) {
			return fmt.Errorf("record %d: offset %d, want %d", i, m.Offset, first+int64(i))
		}
	}
	return nil
}

// fetchBatches fetches partition 0 of topic from offset 0 with a raw Fetch
// request and returns the record batches as stored, for what the consumer
// API hides (codec, producer id).
func fetchBatches(e *env, topic string) ([]*sarama.RecordBatch, error) {
	if err := e.client.RefreshMetadata(topic); err != nil {
		return nil, err
	}
	leader, err := e.client.Leader(topic, 0)
	if err != nil {
		return nil, err
	}
	// Version 11 is the newest Fetch that names topics (13+ uses topic ids);
	// the broker's ApiVersions range still clamps it.
	req := &sarama.FetchRequest{Version: 11, MaxWaitTime: 100, MinBytes: 1, MaxBytes: 1 << 20}
	req.AddBlock(topic, 0, 0, 1<<20, -1)
	resp, err := leader.Fetch(req)
	if err != nil {
		return nil, fmt.Errorf("raw fetch: %w", err)
	}
	block := resp.GetBlock(topic, 0)
	if block == nil || block.Err != sarama.ErrNoError {
		return nil, fmt.Errorf("raw fetch: block %+v", block)
	}
	var batches []*sarama.RecordBatch
	for _, rs := range block.RecordsSet {
		if rs.RecordBatch == nil {
			return nil, fmt.Errorf("raw fetch returned a legacy message set, not a record batch")
		}
		batches = append(batches, rs.RecordBatch)
	}
	return batches, nil
}

// ---- scenarios ----

func scenarioMetadata(ctx context.Context, e *env) error {
	topic := e.name("metadata")
	if err := createTopic(ctx, e, topic, 2); err != nil {
		return err
	}
	if err := e.client.RefreshMetadata(topic); err != nil {
		return fmt.Errorf("refresh metadata: %w", err)
	}
	brokers := e.client.Brokers()
	if len(brokers) != len(e.brokers) {
		return fmt.Errorf("metadata lists %d brokers, want %d", len(brokers), len(e.brokers))
	}
	for _, b := range brokers {
		if want := e.brokers[b.ID()]; b.Addr() != want {
			return fmt.Errorf("broker is node %d at %s, want %q", b.ID(), b.Addr(), want)
		}
	}
	parts, err := e.client.Partitions(topic)
	if err != nil || len(parts) != 2 {
		return fmt.Errorf("topic %s partitions %v (err %v), want 2", topic, parts, err)
	}
	for _, p := range parts {
		leader, err := e.client.Leader(topic, p)
		if err != nil || e.brokers[leader.ID()] == "" {
			return fmt.Errorf("partition %d leader %v (err %v), want a broker", p, leader, err)
		}
		replicas, err := e.client.Replicas(topic, p)
		if err != nil || len(replicas) != len(e.brokers) {
			return fmt.Errorf("partition %d replicas %v (err %v), want %d", p, replicas, err, len(e.brokers))
		}
	}
	return nil
}

func scenarioCreateDeleteTopics(ctx context.Context, e *env) error {
	topic := e.name("create-delete")
	if err := createTopic(ctx, e, topic, 3); err != nil {
		return err
	}
	if err := e.admin.DeleteTopic(topic); err != nil {
		return fmt.Errorf("delete topic: %w", err)
	}
	for {
		topics, err := e.admin.ListTopics()
		if err == nil {
			if _, ok := topics[topic]; !ok {
				return nil
			}
		}
		if serr := sleep(ctx, 100*time.Millisecond); serr != nil {
			return fmt.Errorf("topic %s still listed after delete (err %v)", topic, err)
		}
	}
}

func scenarioProduceAcks(ctx context.Context, e *env, acks sarama.RequiredAcks, what string) error {
	topic := e.name(what)
	if err := createTopic(ctx, e, topic, 1); err != nil {
		return err
	}
	vals := values(what, 50)
	msgs := messages(topic, vals)
	if err := sendAll(e, msgs, func(c *sarama.Config) { c.Producer.RequiredAcks = acks }); err != nil {
		return err
	}
	if acks != sarama.NoResponse {
		// With acks=0 the broker says nothing, so there are no offsets to check.
		if err := checkAcked(msgs); err != nil {
			return err
		}
	}
	got, err := consumePartition(ctx, e, topic, sarama.OffsetOldest, len(vals))
	if err != nil {
		return err
	}
	return checkValues(got, vals, 0)
}

func scenarioKeysHeadersTimestamps(ctx context.Context, e *env) error {
	topic := e.name("khts")
	if err := createTopic(ctx, e, topic, 1); err != nil {
		return err
	}
	base := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	type rec struct {
		key, value []byte
		headers    []sarama.RecordHeader
		ts         time.Time
	}
	want := []rec{
		{[]byte("k0"), []byte("v0"), []sarama.RecordHeader{{Key: []byte("h"), Value: []byte("a")}, {Key: []byte("h"), Value: []byte("b")}, {Key: []byte("other"), Value: []byte("c")}}, base},
		{[]byte("k1"), nil, nil, base.Add(1500 * time.Millisecond)}, // tombstone: null value
		{nil, []byte("v2"), []sarama.RecordHeader{{Key: []byte("empty"), Value: []byte{}}}, base.Add(-time.Minute)},
		{[]byte(""), []byte(""), nil, base.Add(3 * time.Second)},
	}
	msgs := make([]*sarama.ProducerMessage, len(want))
	for i, w := range want {
		m := &sarama.ProducerMessage{Topic: topic, Partition: 0, Headers: w.headers, Timestamp: w.ts}
		// A nil Encoder is a null key / value on the wire.
		if w.key != nil {
			m.Key = sarama.ByteEncoder(w.key)
		}
		if w.value != nil {
			m.Value = sarama.ByteEncoder(w.value)
		}
		msgs[i] = m
	}
	if err := sendAll(e, msgs, nil); err != nil {
		return err
	}
	got, err := consumePartition(ctx, e, topic, sarama.OffsetOldest, len(want))
	if err != nil {
		return err
	}
	for i, w := range want {
		g := got[i]
		if (g.Key == nil) != (w.key == nil) || string(g.Key) != string(w.key) {
			return fmt.Errorf("record %d: key %q (nil=%v), want %q (nil=%v)", i, g.Key, g.Key == nil, w.key, w.key == nil)
		}
		if (g.Value == nil) != (w.value == nil) || string(g.Value) != string(w.value) {
			return fmt.Errorf("record %d: value %q (nil=%v), want %q (nil=%v)", i, g.Value, g.Value == nil, w.value, w.value == nil)
		}
		if !g.Timestamp.Equal(w.ts) {
			return fmt.Errorf("record %d: timestamp %d, want %d", i, g.Timestamp.UnixMilli(), w.ts.UnixMilli())
		}
		if len(g.Headers) != len(w.headers) {
			return fmt.Errorf("record %d: %d headers, want %d", i, len(g.Headers), len(w.headers))
		}
		for j, h := range w.headers {
			if string(g.Headers[j].Key) != string(h.Key) || string(g.Headers[j].Value) != string(h.Value) {
				return fmt.Errorf("record %d header %d: %s=%q, want %s=%q", i, j, g.Headers[j].Key, g.Headers[j].Value, h.Key, h.Value)
			}
		}
	}
	return nil
}

func scenarioCompression(ctx context.Context, e *env, codec sarama.CompressionCodec, what string) error {
	topic := e.name(what)
	if err := createTopic(ctx, e, topic, 1); err != nil {
		return err
	}
	vals := make([]string, 200)
	for i := range vals {
		vals[i] = fmt.Sprintf("%s-%03d-%s", what, i, "the quick brown fox jumps over the lazy dog")
	}
	msgs := messages(topic, vals)
	if err := sendAll(e, msgs, func(c *sarama.Config) { c.Producer.Compression = codec }); err != nil {
		return err
	}
	if err := checkAcked(msgs); err != nil {
		return err
	}
	got, err := consumePartition(ctx, e, topic, sarama.OffsetOldest, len(vals))
	if err != nil {
		return err
	}
	if err := checkValues(got, vals, 0); err != nil {
		return err
	}
	// The broker keeps the producer's codec (compression.type=producer).
	batches, err := fetchBatches(e, topic)
	if err != nil {
		return err
	}
	if len(batches) == 0 {
		return fmt.Errorf("raw fetch returned no batches")
	}
	for i, b := range batches {
		if b.Codec != codec {
			return fmt.Errorf("stored batch %d has codec %v, want %v", i, b.Codec, codec)
		}
	}
	return nil
}

func scenarioIdempotentProduce(ctx context.Context, e *env) error {
	topic := e.name("idempotent")
	if err := createTopic(ctx, e, topic, 1); err != nil {
		return err
	}
	vals := values("idem", 100)
	msgs := messages(topic, vals)
	err := sendAll(e, msgs, func(c *sarama.Config) {
		// What Sarama requires for idempotence.
		c.Producer.Idempotent = true
		c.Producer.RequiredAcks = sarama.WaitForAll
		c.Producer.Retry.Max = 5
		c.Net.MaxOpenRequests = 1
	})
	if err != nil {
		return err
	}
	if err := checkAcked(msgs); err != nil {
		return err
	}
	got, err := consumePartition(ctx, e, topic, sarama.OffsetOldest, len(vals))
	if err != nil {
		return err
	}
	if err := checkValues(got, vals, 0); err != nil {
		return err
	}
	// The stored batches carry the producer id the broker granted.
	batches, err := fetchBatches(e, topic)
	if err != nil {
		return err
	}
	for i, b := range batches {
		if b.ProducerID < 0 {
			return fmt.Errorf("stored batch %d has producer id %d: not produced idempotently", i, b.ProducerID)
		}
	}
	return nil
}

func scenarioConsumeEarliest(ctx context.Context, e *env) error {
	topic := e.name("earliest")
	if err := createTopic(ctx, e, topic, 1); err != nil {
		return err
	}
	vals := values("early", 20)
	if err := sendAll(e, messages(topic, vals), nil); err != nil {
		return err
	}
	// A brand-new group with no commits starts at Offsets.Initial (oldest).
	m, err := startMember(ctx, e, e.name("earliest-g"), topic)
	if err != nil {
		return err
	}
	defer m.close()
	if err := waitSeen(ctx, []*member{m}, vals); err != nil {
		return err
	}
	log.Printf("consume_earliest: all records seen")
	_, seen, _ := m.snapshot()
	for i, s := range seen {
		if s.value != vals[i] || s.offset != int64(i) {
			return fmt.Errorf("record %d: %q at offset %d, want %q at %d", i, s.value, s.offset, vals[i], i)
		}
	}
	return nil
}

func scenarioConsumeLatest(ctx context.Context, e *env) error {
	topic := e.name("latest")
	if err := createTopic(ctx, e, topic, 1); err != nil {
		return err
	}
	old := values("old", 10)
	if err := sendAll(e, messages(topic, old), nil); err != nil {
		return err
	}
	c, err := sarama.NewConsumer(e.seeds, newConfig())
	if err != nil {
		return err
	}
	defer c.Close()
	// ConsumePartition resolves OffsetNewest before it returns, so the
	// consumer is positioned before the new records are produced.
	pc, err := c.ConsumePartition(topic, 0, sarama.OffsetNewest)
	if err != nil {
		return fmt.Errorf("consume partition at newest: %w", err)
	}
	defer pc.Close()
	fresh := values("new", 5)
	if err := sendAll(e, messages(topic, fresh), nil); err != nil {
		return err
	}
	got, err := readN(ctx, pc, len(fresh))
	if err != nil {
		return err
	}
	return checkValues(got, fresh, int64(len(old)))
}

func scenarioConsumeTimestamp(ctx context.Context, e *env) error {
	topic := e.name("timestamp")
	if err := createTopic(ctx, e, topic, 1); err != nil {
		return err
	}
	base := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	vals := values("ts", 10)
	msgs := messages(topic, vals)
	for i, m := range msgs {
		m.Timestamp = base.Add(time.Duration(i) * time.Second)
	}
	if err := sendAll(e, msgs, nil); err != nil {
		return err
	}
	// The first record at or after base+4.5s is record 5.
	at := base.Add(4500 * time.Millisecond).UnixMilli()
	off, err := e.client.GetOffset(topic, 0, at)
	if err != nil {
		return fmt.Errorf("offset for time: %w", err)
	}
	if off != 5 {
		return fmt.Errorf("offset for time %d is %d, want 5", at, off)
	}
	got, err := consumePartition(ctx, e, topic, off, 5)
	if err != nil {
		return err
	}
	return checkValues(got, vals[5:], 5)
}

func scenarioAdminConfigs(ctx context.Context, e *env) error {
	topic := e.name("configs")
	if err := createTopic(ctx, e, topic, 1); err != nil {
		return err
	}
	retention := func() (sarama.ConfigEntry, error) {
		entries, err := e.admin.DescribeConfig(sarama.ConfigResource{Type: sarama.TopicResource, Name: topic})
		if err != nil {
			return sarama.ConfigEntry{}, err
		}
		for _, c := range entries {
			if c.Name == "retention.ms" {
				return c, nil
			}
		}
		return sarama.ConfigEntry{}, fmt.Errorf("retention.ms not described (%d entries)", len(entries))
	}
	c, err := retention()
	if err != nil {
		return fmt.Errorf("describe configs: %w", err)
	}
	if c.Value != "604800000" || c.Source != sarama.SourceDefault {
		return fmt.Errorf("retention.ms = %s from %v, want 604800000 from Default", c.Value, c.Source)
	}
	newValue := "3600000"
	err = e.admin.IncrementalAlterConfig(sarama.TopicResource, topic, map[string]sarama.IncrementalAlterConfigsEntry{
		"retention.ms": {Operation: sarama.IncrementalAlterConfigsOperationSet, Value: &newValue},
	}, false)
	if err != nil {
		return fmt.Errorf("incremental alter configs: %w", err)
	}
	c, err = retention()
	if err != nil {
		return fmt.Errorf("describe configs after alter: %w", err)
	}
	if c.Value != newValue || c.Source != sarama.SourceTopic {
		return fmt.Errorf("after alter retention.ms = %s from %v, want %s from Topic", c.Value, c.Source, newValue)
	}
	return nil
}

func scenarioAdminGrowPartitions(ctx context.Context, e *env) error {
	topic := e.name("grow")
	if err := createTopic(ctx, e, topic, 1); err != nil {
		return err
	}
	if err := e.admin.CreatePartitions(topic, 3, nil, false); err != nil {
		return fmt.Errorf("create partitions: %w", err)
	}
	return waitPartitions(ctx, e, topic, 3)
}

func scenarioAdminDeleteRecords(ctx context.Context, e *env) error {
	topic := e.name("delete-records")
	if err := createTopic(ctx, e, topic, 1); err != nil {
		return err
	}
	vals := values("dr", 10)
	if err := sendAll(e, messages(topic, vals), nil); err != nil {
		return err
	}
	if err := e.admin.DeleteRecords(topic, map[int32]int64{0: 4}); err != nil {
		return fmt.Errorf("delete records: %w", err)
	}
	start, err := e.client.GetOffset(topic, 0, sarama.OffsetOldest)
	if err != nil || start != 4 {
		return fmt.Errorf("log start offset %d (err %v), want 4", start, err)
	}
	got, err := consumePartition(ctx, e, topic, sarama.OffsetOldest, 6)
	if err != nil {
		return err
	}
	return checkValues(got, vals[4:], 4)
}
