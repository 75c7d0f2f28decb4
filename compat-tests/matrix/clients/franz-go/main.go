// Compatibility-matrix driver for franz-go (kgo + kadm): runs every scenario
// of compat-tests/matrix/scenarios.json against one broker and prints one
// JSON result line per scenario on stdout (contract: matrix-contract.md).
// The same code runs against Runnel and Apache Kafka; it never asks which.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// env is what every scenario gets: the broker address and a per-run prefix
// so each scenario's topics and groups are its own.
type env struct {
	bootstrap string
	seeds     []string         // --bootstrap split at commas
	brokers   map[int32]string // node id -> host:port of every broker ($MATRIX_BROKERS)
	prefix    string
	adm       *kadm.Client
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

func (e *env) name(what string) string { return e.prefix + "-" + what }

// result is one stdout line, fields in the contract's order.
type result struct {
	Scenario string `json:"scenario"`
	Status   string `json:"status"`
	Detail   string `json:"detail"`
}

type scenario struct {
	id      string
	timeout time.Duration
	run     func(ctx context.Context, e *env) error
}

// errUnsupported marks a scenario the client cannot express at all.
type errUnsupported struct{ why string }

func (u errUnsupported) Error() string { return u.why }

// okDetail is a pass that says more than the time it took.
type okDetail struct{ detail string }

func (d okDetail) Error() string { return d.detail }

func main() {
	bootstrap := flag.String("bootstrap", "", "host:port of the broker")
	security := flag.String("security", "", "JSON file of the security columns: run only those (security.go)")
	flag.Parse()
	if *bootstrap == "" {
		log.Fatal("--bootstrap is required")
	}
	log.SetOutput(os.Stderr)

	suffix := make([]byte, 4)
	_, _ = rand.Read(suffix)
	e := &env{bootstrap: *bootstrap, seeds: strings.Split(*bootstrap, ","), prefix: "franzgo-" + hex.EncodeToString(suffix)}
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
	if *security != "" {
		// Each security scenario makes its clients for its own listener.
		var err error
		if list, err = securityScenarios(*security); err != nil {
			log.Fatalf("--security: %v", err)
		}
	} else {
		admClient, err := kgo.NewClient(kgo.SeedBrokers(e.seeds...))
		if err != nil {
			log.Fatalf("admin client: %v", err)
		}
		defer admClient.Close()
		e.adm = kadm.NewClient(admClient)
	}

	out := json.NewEncoder(os.Stdout)
	for _, s := range list {
		status, detail := runOne(s, e)
		log.Printf("%s: %s %s", s.id, status, detail)
		_ = out.Encode(result{Scenario: s.id, Status: status, Detail: detail})
	}
}

// runOne bounds a scenario by its timeout and turns a panic into a failure,
// so one broken scenario never stops the others.
func runOne(s scenario, e *env) (status, detail string) {
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	defer func() {
		if r := recover(); r != nil {
			status, detail = "fail", fmt.Sprintf("panic: %v", r)
		}
	}()
	start := time.Now()
	err := s.run(ctx, e)
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
}

func scenarios() []scenario {
	t := 45 * time.Second
	return []scenario{
		{"metadata", t, scenarioMetadata},
		{"create_delete_topics", t, scenarioCreateDeleteTopics},
		{"produce_acks0", t, func(ctx context.Context, e *env) error { return scenarioProduceAcks(ctx, e, kgo.NoAck(), "acks0") }},
		{"produce_acks1", t, func(ctx context.Context, e *env) error { return scenarioProduceAcks(ctx, e, kgo.LeaderAck(), "acks1") }},
		{"produce_acksall", t, func(ctx context.Context, e *env) error {
			return scenarioProduceAcks(ctx, e, kgo.AllISRAcks(), "acksall")
		}},
		{"keys_headers_timestamps", t, scenarioKeysHeadersTimestamps},
		{"compression_gzip", t, func(ctx context.Context, e *env) error {
			return scenarioCompression(ctx, e, kgo.GzipCompression(), 1, "gzip")
		}},
		{"compression_snappy", t, func(ctx context.Context, e *env) error {
			return scenarioCompression(ctx, e, kgo.SnappyCompression(), 2, "snappy")
		}},
		{"compression_lz4", t, func(ctx context.Context, e *env) error {
			return scenarioCompression(ctx, e, kgo.Lz4Compression(), 3, "lz4")
		}},
		{"compression_zstd", t, func(ctx context.Context, e *env) error {
			return scenarioCompression(ctx, e, kgo.ZstdCompression(), 4, "zstd")
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

func createTopic(ctx context.Context, e *env, topic string, partitions int32) error {
	// A replica on every broker: 1 on one broker, 3 in a cluster.
	resp, err := e.adm.CreateTopic(ctx, partitions, int16(len(e.brokers)), nil, topic)
	if err != nil {
		return fmt.Errorf("create topic %s: %w", topic, err)
	}
	if resp.Err != nil {
		return fmt.Errorf("create topic %s: %v (%s)", topic, resp.Err, resp.ErrMessage)
	}
	return waitPartitions(ctx, e, topic, int(partitions))
}

// waitPartitions polls metadata until topic shows n partitions, each led by
// a broker: creation and growth are asynchronous in Kafka.
func waitPartitions(ctx context.Context, e *env, topic string, n int) error {
	var last string
	for {
		md, err := e.adm.Metadata(ctx, topic)
		if err == nil {
			td, ok := md.Topics[topic]
			if ok && td.Err == nil && len(td.Partitions) == n && allLed(td) {
				return nil
			}
			if ok {
				last = fmt.Sprintf("%d partitions, err %v", len(td.Partitions), td.Err)
			}
		} else {
			last = err.Error()
		}
		if err := sleep(ctx, 100*time.Millisecond); err != nil {
			return fmt.Errorf("topic %s never showed %d partitions (last: %s)", topic, n, last)
		}
	}
}

func allLed(td kadm.TopicDetail) bool {
	for _, p := range td.Partitions {
		if p.Leader < 0 {
			return false
		}
	}
	return true
}

func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

func values(prefix string, n int) []string {
	vs := make([]string, n)
	for i := range vs {
		vs[i] = fmt.Sprintf("%s-%03d", prefix, i)
	}
	return vs
}

// produceSync produces values to partition 0 of topic with the given client
// options and returns the offsets the broker acknowledged.
func produceSync(ctx context.Context, e *env, topic string, vals []string, opts ...kgo.Opt) ([]int64, error) {
	opts = append([]kgo.Opt{kgo.SeedBrokers(e.seeds...), kgo.DefaultProduceTopic(topic)}, opts...)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	recs := make([]*kgo.Record, len(vals))
	for i, v := range vals {
		recs[i] = &kgo.Record{Value: []byte(v)}
	}
	results := cl.ProduceSync(ctx, recs...)
	if err := results.FirstErr(); err != nil {
		return nil, fmt.Errorf("produce: %w", err)
	}
	offs := make([]int64, len(recs))
	for i, r := range results {
		offs[i] = r.Record.Offset
	}
	return offs, nil
}

// consumeN reads until n records arrived (or ctx ends) with a client built
// from opts, which must say what to consume.
func consumeN(ctx context.Context, e *env, n int, opts ...kgo.Opt) ([]*kgo.Record, error) {
	opts = append([]kgo.Opt{kgo.SeedBrokers(e.seeds...)}, opts...)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	return pollN(ctx, cl, n)
}

func pollN(ctx context.Context, cl *kgo.Client, n int) ([]*kgo.Record, error) {
	var got []*kgo.Record
	for len(got) < n {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return got, fmt.Errorf("got %d of %d records before the deadline", len(got), n)
		}
		for _, fe := range fs.Errors() {
			return got, fmt.Errorf("fetch %s/%d: %w", fe.Topic, fe.Partition, fe.Err)
		}
		got = append(got, fs.Records()...)
	}
	return got, nil
}

func fromStart(topic string) []kgo.Opt {
	return []kgo.Opt{kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart())}
}

// checkValues requires exactly want, in order, at offsets first, first+1, ...
func checkValues(got []*kgo.Record, want []string, first int64) error {
	if len(got) != len(want) {
		return fmt.Errorf("consumed %d records, want %d", len(got), len(want))
	}
	for i, r := range got {
		if string(r.Value) != want[i] {
			return fmt.Errorf("record %d: value %q, want %q", i, r.Value, want[i])
		}
		if r.Offset != first+int64(i) {
			return fmt.Errorf("record %d: offset %d, want %d", i, r.Offset, first+int64(i))
		}
	}
	return nil
}

func checkOffsets(offs []int64) error {
	for i, o := range offs {
		if o != int64(i) {
			return fmt.Errorf("record %d acknowledged at offset %d, want %d", i, o, i)
		}
	}
	return nil
}

// ---- scenarios ----

func scenarioMetadata(ctx context.Context, e *env) error {
	topic := e.name("metadata")
	if err := createTopic(ctx, e, topic, 2); err != nil {
		return err
	}
	md, err := e.adm.Metadata(ctx, topic)
	if err != nil {
		return err
	}
	if len(md.Brokers) != len(e.brokers) {
		return fmt.Errorf("metadata lists %d brokers, want %d", len(md.Brokers), len(e.brokers))
	}
	for _, b := range md.Brokers {
		if want := e.brokers[b.NodeID]; net.JoinHostPort(b.Host, strconv.Itoa(int(b.Port))) != want {
			return fmt.Errorf("broker is node %d at %s:%d, want %q", b.NodeID, b.Host, b.Port, want)
		}
	}
	td := md.Topics[topic]
	if td.Err != nil || len(td.Partitions) != 2 {
		return fmt.Errorf("topic %s: %d partitions, err %v; want 2", topic, len(td.Partitions), td.Err)
	}
	for _, p := range td.Partitions {
		if _, ok := e.brokers[p.Leader]; !ok || len(p.Replicas) != len(e.brokers) {
			return fmt.Errorf("partition %d: leader %d replicas %v, want a broker and %d replicas", p.Partition,
				p.Leader, p.Replicas, len(e.brokers))
		}
	}
	// A new replica joins the ISR once it has fetched: wait for it.
	return waitFullISR(ctx, e, topic)
}

func scenarioCreateDeleteTopics(ctx context.Context, e *env) error {
	topic := e.name("create-delete")
	if err := createTopic(ctx, e, topic, 3); err != nil {
		return err
	}
	resp, err := e.adm.DeleteTopic(ctx, topic)
	if err != nil {
		return fmt.Errorf("delete topic: %w", err)
	}
	if resp.Err != nil {
		return fmt.Errorf("delete topic: %v (%s)", resp.Err, resp.ErrMessage)
	}
	for {
		listed, err := e.adm.ListTopics(ctx)
		if err == nil && !listed.Has(topic) {
			return nil
		}
		if err := sleep(ctx, 100*time.Millisecond); err != nil {
			return fmt.Errorf("topic %s still listed after delete", topic)
		}
	}
}

func scenarioProduceAcks(ctx context.Context, e *env, acks kgo.Acks, what string) error {
	topic := e.name(what)
	if err := createTopic(ctx, e, topic, 1); err != nil {
		return err
	}
	opts := []kgo.Opt{kgo.RequiredAcks(acks)}
	if acks != kgo.AllISRAcks() {
		// franz-go produces idempotently by default, which needs acks=all.
		opts = append(opts, kgo.DisableIdempotentWrite())
	}
	vals := values(what, 50)
	offs, err := produceSync(ctx, e, topic, vals, opts...)
	if err != nil {
		return err
	}
	if acks != kgo.NoAck() {
		// With acks=0 the broker says nothing, so there are no offsets to check.
		if err := checkOffsets(offs); err != nil {
			return err
		}
	}
	got, err := consumeN(ctx, e, len(vals), fromStart(topic)...)
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
	recs := []*kgo.Record{
		{Key: []byte("k0"), Value: []byte("v0"), Timestamp: base,
			Headers: []kgo.RecordHeader{{Key: "h", Value: []byte("a")}, {Key: "h", Value: []byte("b")}, {Key: "other", Value: []byte("c")}}},
		{Key: []byte("k1"), Value: nil, Timestamp: base.Add(1500 * time.Millisecond)}, // tombstone: null value
		{Key: nil, Value: []byte("v2"), Timestamp: base.Add(-time.Minute),
			Headers: []kgo.RecordHeader{{Key: "empty", Value: []byte{}}}},
		{Key: []byte(""), Value: []byte(""), Timestamp: base.Add(3 * time.Second)},
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.seeds...), kgo.DefaultProduceTopic(topic))
	if err != nil {
		return err
	}
	res := cl.ProduceSync(ctx, recs...)
	cl.Close()
	if err := res.FirstErr(); err != nil {
		return fmt.Errorf("produce: %w", err)
	}
	got, err := consumeN(ctx, e, len(recs), fromStart(topic)...)
	if err != nil {
		return err
	}
	if len(got) != len(recs) {
		return fmt.Errorf("consumed %d records, want %d", len(got), len(recs))
	}
	for i, w := range recs {
		g := got[i]
		if (g.Key == nil) != (w.Key == nil) || string(g.Key) != string(w.Key) {
			return fmt.Errorf("record %d: key %q (nil=%v), want %q (nil=%v)", i, g.Key, g.Key == nil, w.Key, w.Key == nil)
		}
		if (g.Value == nil) != (w.Value == nil) || string(g.Value) != string(w.Value) {
			return fmt.Errorf("record %d: value %q (nil=%v), want %q (nil=%v)", i, g.Value, g.Value == nil, w.Value, w.Value == nil)
		}
		if !g.Timestamp.Equal(w.Timestamp) {
			return fmt.Errorf("record %d: timestamp %d, want %d", i, g.Timestamp.UnixMilli(), w.Timestamp.UnixMilli())
		}
		if len(g.Headers) != len(w.Headers) {
			return fmt.Errorf("record %d: %d headers, want %d", i, len(g.Headers), len(w.Headers))
		}
		for j, h := range w.Headers {
			if g.Headers[j].Key != h.Key || string(g.Headers[j].Value) != string(h.Value) {
				return fmt.Errorf("record %d header %d: %s=%q, want %s=%q", i, j, g.Headers[j].Key, g.Headers[j].Value, h.Key, h.Value)
			}
		}
	}
	return nil
}

// fetchCodecs records the codec of every batch the consumer reads, so the
// scenario can tell the broker kept the producer's compression.
type fetchCodecs struct{ seen map[uint8]int }

func (f *fetchCodecs) OnFetchBatchRead(_ kgo.BrokerMetadata, _ string, _ int32, m kgo.FetchBatchMetrics) {
	f.seen[m.CompressionType]++
}

func scenarioCompression(ctx context.Context, e *env, codec kgo.CompressionCodec, codecID uint8, what string) error {
	topic := e.name(what)
	if err := createTopic(ctx, e, topic, 1); err != nil {
		return err
	}
	// Compressible values, produced in one linger window so they share batches.
	vals := make([]string, 200)
	for i := range vals {
		vals[i] = fmt.Sprintf("%s-%03d-%s", what, i, "the quick brown fox jumps over the lazy dog")
	}
	offs, err := produceSync(ctx, e, topic, vals, kgo.ProducerBatchCompression(codec), kgo.ProducerLinger(50*time.Millisecond))
	if err != nil {
		return err
	}
	if err := checkOffsets(offs); err != nil {
		return err
	}
	hook := &fetchCodecs{seen: map[uint8]int{}}
	got, err := consumeN(ctx, e, len(vals), append(fromStart(topic), kgo.WithHooks(hook))...)
	if err != nil {
		return err
	}
	if err := checkValues(got, vals, 0); err != nil {
		return err
	}
	if len(hook.seen) != 1 || hook.seen[codecID] == 0 {
		return fmt.Errorf("fetched batches by codec id %v, want all %d (%s)", hook.seen, codecID, what)
	}
	return nil
}

func scenarioIdempotentProduce(ctx context.Context, e *env) error {
	topic := e.name("idempotent")
	if err := createTopic(ctx, e, topic, 1); err != nil {
		return err
	}
	// Idempotence is franz-go's default; ask for the producer id to be sure
	// the broker granted one.
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.seeds...), kgo.DefaultProduceTopic(topic))
	if err != nil {
		return err
	}
	defer cl.Close()
	vals := values("idem", 100)
	recs := make([]*kgo.Record, len(vals))
	for i, v := range vals {
		recs[i] = &kgo.Record{Value: []byte(v)}
	}
	res := cl.ProduceSync(ctx, recs...)
	if err := res.FirstErr(); err != nil {
		return fmt.Errorf("produce: %w", err)
	}
	pid, epoch, err := cl.ProducerID(ctx)
	if err != nil || pid < 0 {
		return fmt.Errorf("producer id %d epoch %d err %v: broker did not grant an idempotent producer id", pid, epoch, err)
	}
	for i, r := range res {
		if r.Record.ProducerID != pid {
			return fmt.Errorf("record %d produced with producer id %d, want %d", i, r.Record.ProducerID, pid)
		}
		if r.Record.Offset != int64(i) {
			return fmt.Errorf("record %d acknowledged at offset %d", i, r.Record.Offset)
		}
	}
	got, err := consumeN(ctx, e, len(vals), fromStart(topic)...)
	if err != nil {
		return err
	}
	if err := checkValues(got, vals, 0); err != nil {
		return err
	}
	for i, r := range got {
		if r.ProducerID != pid {
			return fmt.Errorf("consumed record %d has producer id %d, want %d", i, r.ProducerID, pid)
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
	if _, err := produceSync(ctx, e, topic, vals); err != nil {
		return err
	}
	// A brand-new group with no commits falls back to the reset offset.
	got, err := consumeN(ctx, e, len(vals), kgo.ConsumerGroup(e.name("earliest-group")), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit())
	if err != nil {
		return err
	}
	return checkValues(got, vals, 0)
}

// firstFetch closes sent when the client first writes a Fetch request.
type firstFetch struct {
	once sync.Once
	sent chan struct{}
}

func (f *firstFetch) OnBrokerWrite(_ kgo.BrokerMetadata, key int16, _ int, _, _ time.Duration, err error) {
	if key == 1 && err == nil { // 1 = Fetch
		f.once.Do(func() { close(f.sent) })
	}
}

func scenarioConsumeLatest(ctx context.Context, e *env) error {
	topic := e.name("latest")
	if err := createTopic(ctx, e, topic, 1); err != nil {
		return err
	}
	old := values("old", 10)
	if _, err := produceSync(ctx, e, topic, old); err != nil {
		return err
	}
	fetching := &firstFetch{sent: make(chan struct{})}
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.seeds...), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtEnd()), kgo.WithHooks(fetching))
	if err != nil {
		return err
	}
	defer cl.Close()
	// kgo positions lazily, inside a poll: it resolves "latest" with
	// ListOffsets and only then sends its first Fetch. Poll until that Fetch
	// is on the wire, so the consumer is positioned before new records exist.
	pctx, pcancel := context.WithCancel(ctx)
	polled := make(chan kgo.Fetches, 1)
	go func() { polled <- cl.PollFetches(pctx) }()
	select {
	case <-fetching.sent:
	case <-ctx.Done():
	}
	pcancel()
	early := <-polled
	if ctx.Err() != nil {
		return fmt.Errorf("consumer never sent a fetch")
	}
	if n := len(early.Records()); n != 0 {
		return fmt.Errorf("consumer positioned at latest returned %d old records", n)
	}
	fresh := values("new", 5)
	if _, err := produceSync(ctx, e, topic, fresh); err != nil {
		return err
	}
	got, err := pollN(ctx, cl, len(fresh))
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
	recs := make([]*kgo.Record, len(vals))
	for i, v := range vals {
		recs[i] = &kgo.Record{Value: []byte(v), Timestamp: base.Add(time.Duration(i) * time.Second)}
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.seeds...), kgo.DefaultProduceTopic(topic))
	if err != nil {
		return err
	}
	res := cl.ProduceSync(ctx, recs...)
	cl.Close()
	if err := res.FirstErr(); err != nil {
		return fmt.Errorf("produce: %w", err)
	}
	// The first record at or after base+4.5s is record 5.
	at := base.Add(4500 * time.Millisecond).UnixMilli()
	listed, err := e.adm.ListOffsetsAfterMilli(ctx, at, topic)
	if err != nil {
		return fmt.Errorf("list offsets for time: %w", err)
	}
	lo, ok := listed.Lookup(topic, 0)
	if !ok || lo.Err != nil || lo.Offset != 5 {
		return fmt.Errorf("offset for time: %+v, want offset 5", lo)
	}
	got, err := consumeN(ctx, e, 5, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AfterMilli(at)))
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
	retention := func() (string, string, error) {
		rcs, err := e.adm.DescribeTopicConfigs(ctx, topic)
		if err != nil {
			return "", "", err
		}
		rc, err := rcs.On(topic, nil)
		if err != nil {
			return "", "", err
		}
		if rc.Err != nil {
			return "", "", rc.Err
		}
		for _, c := range rc.Configs {
			if c.Key == "retention.ms" {
				return c.MaybeValue(), c.Source.String(), nil
			}
		}
		return "", "", fmt.Errorf("retention.ms not described (%d configs)", len(rc.Configs))
	}
	v, src, err := retention()
	if err != nil {
		return fmt.Errorf("describe configs: %w", err)
	}
	if v != "604800000" || src != "DEFAULT_CONFIG" {
		return fmt.Errorf("retention.ms = %s from %s, want 604800000 from DEFAULT_CONFIG", v, src)
	}
	newValue := "3600000"
	resps, err := e.adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "retention.ms", Value: &newValue}}, topic)
	if err != nil {
		return fmt.Errorf("incremental alter configs: %w", err)
	}
	for _, r := range resps {
		if r.Err != nil {
			return fmt.Errorf("incremental alter configs: %v (%s)", r.Err, r.ErrMessage)
		}
	}
	v, src, err = retention()
	if err != nil {
		return fmt.Errorf("describe configs after alter: %w", err)
	}
	if v != newValue || src != "DYNAMIC_TOPIC_CONFIG" {
		return fmt.Errorf("after alter retention.ms = %s from %s, want %s from DYNAMIC_TOPIC_CONFIG", v, src, newValue)
	}
	return nil
}

func scenarioAdminGrowPartitions(ctx context.Context, e *env) error {
	topic := e.name("grow")
	if err := createTopic(ctx, e, topic, 1); err != nil {
		return err
	}
	resps, err := e.adm.UpdatePartitions(ctx, 3, topic)
	if err != nil {
		return fmt.Errorf("create partitions: %w", err)
	}
	for _, r := range resps {
		if r.Err != nil {
			return fmt.Errorf("create partitions: %v (%s)", r.Err, r.ErrMessage)
		}
	}
	return waitPartitions(ctx, e, topic, 3)
}

func scenarioAdminDeleteRecords(ctx context.Context, e *env) error {
	topic := e.name("delete-records")
	if err := createTopic(ctx, e, topic, 1); err != nil {
		return err
	}
	vals := values("dr", 10)
	if _, err := produceSync(ctx, e, topic, vals); err != nil {
		return err
	}
	os := kadm.Offsets{}
	os.AddOffset(topic, 0, 4, -1)
	resps, err := e.adm.DeleteRecords(ctx, os)
	if err != nil {
		return fmt.Errorf("delete records: %w", err)
	}
	r, ok := resps.Lookup(topic, 0)
	if !ok || r.Err != nil || r.LowWatermark != 4 {
		return fmt.Errorf("delete records response %+v, want low watermark 4", r)
	}
	starts, err := e.adm.ListStartOffsets(ctx, topic)
	if err != nil {
		return fmt.Errorf("list start offsets: %w", err)
	}
	lo, ok := starts.Lookup(topic, 0)
	if !ok || lo.Err != nil || lo.Offset != 4 {
		return fmt.Errorf("log start offset %+v, want 4", lo)
	}
	got, err := consumeN(ctx, e, 6, fromStart(topic)...)
	if err != nil {
		return err
	}
	return checkValues(got, vals[4:], 4)
}
