package main

// Transactions: commit, abort and fencing (scenarioTransactions), and
// consume-transform-produce with the offsets in the transaction
// (scenarioTransactionsOffsets, through kgo's GroupTransactSession).

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func txnOpts(e *env, txnID string) []kgo.Opt {
	return []kgo.Opt{kgo.SeedBrokers(e.seeds...), kgo.TransactionalID(txnID), kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.TransactionTimeout(30 * time.Second), kgo.RecordPartitioner(kgo.ManualPartitioner())} // Record.Partition
}

// txnProduce produces vals round-robin over partitions in the open
// transaction and waits for every acknowledgement.
func txnProduce(ctx context.Context, cl *kgo.Client, topic string, partitions int32, vals []string) error {
	recs := make([]*kgo.Record, len(vals))
	for i, v := range vals {
		recs[i] = &kgo.Record{Topic: topic, Partition: int32(i) % partitions, Value: []byte(v)}
	}
	return cl.ProduceSync(ctx, recs...).FirstErr()
}

// readAll reads every partition from the start with the isolation level
// until want[p] records of each arrived, then polls once more so that an
// extra record (an aborted one, a control record) shows; values per partition.
func readAll(ctx context.Context, e *env, topic string, want []int, level kgo.IsolationLevel) ([][]string, error) {
	parts := map[int32]kgo.Offset{}
	for p := range want {
		parts[int32(p)] = kgo.NewOffset().AtStart()
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.seeds...), kgo.FetchIsolationLevel(level),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: parts}))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	got := make([][]string, len(want))
	done := func() bool {
		for p, n := range want {
			if len(got[p]) < n {
				return false
			}
		}
		return true
	}
	for extra := false; ; {
		pctx, cancel := ctx, context.CancelFunc(func() {})
		if extra {
			pctx, cancel = context.WithTimeout(ctx, 500*time.Millisecond)
		}
		fs := cl.PollFetches(pctx)
		cancel()
		if ctx.Err() != nil {
			return got, fmt.Errorf("reading %s: %v of %v records before the deadline", topic, lens(got), want)
		}
		for _, fe := range fs.Errors() {
			if !errors.Is(fe.Err, context.DeadlineExceeded) {
				return got, fmt.Errorf("fetch %s/%d: %w", fe.Topic, fe.Partition, fe.Err)
			}
		}
		fs.EachRecord(func(r *kgo.Record) { got[r.Partition] = append(got[r.Partition], string(r.Value)) })
		if extra {
			return got, nil
		}
		extra = done()
	}
}

func lens(vs [][]string) []int {
	out := make([]int, len(vs))
	for i, v := range vs {
		out[i] = len(v)
	}
	return out
}

func sameValues(got, want []string, what string) error {
	if len(got) != len(want) {
		return fmt.Errorf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			return fmt.Errorf("%s: value %d is %q, want %q", what, i, got[i], want[i])
		}
	}
	return nil
}

// onPartition is what round-robin over partitions puts on partition p.
func onPartition(vals []string, partitions, p int) []string {
	var out []string
	for i := p; i < len(vals); i += partitions {
		out = append(out, vals[i])
	}
	return out
}

func concat(lists ...[]string) []string {
	var out []string
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

func isFenced(err error) bool {
	return errors.Is(err, kerr.ProducerFenced) || errors.Is(err, kerr.InvalidProducerEpoch)
}

func scenarioTransactions(ctx context.Context, e *env) error {
	topic, txnID := e.name("txn"), e.name("txn-id")
	if err := createTopic(ctx, e, topic, 2); err != nil {
		return err
	}
	first, aborted, second := values("commit1", 10), values("abort", 6), values("commit2", 8)
	p, err := kgo.NewClient(txnOpts(e, txnID)...)
	if err != nil {
		return err
	}
	defer p.Close()
	// kgo inits the producer id (InitProducerId) on first use: ask now.
	if _, _, err := p.ProducerID(ctx); err != nil {
		return fmt.Errorf("init: %w", err)
	}
	for _, txn := range []struct {
		vals   []string
		commit kgo.TransactionEndTry
	}{{first, kgo.TryCommit}, {aborted, kgo.TryAbort}, {second, kgo.TryCommit}} {
		if err := p.BeginTransaction(); err != nil {
			return fmt.Errorf("begin: %w", err)
		}
		// ProduceSync waits for the acknowledgements: the aborted
		// transaction's records are in the log before the abort.
		if err := txnProduce(ctx, p, topic, 2, txn.vals); err != nil {
			return fmt.Errorf("produce in a transaction: %w", err)
		}
		if err := p.EndTransaction(ctx, txn.commit); err != nil {
			return fmt.Errorf("end transaction (commit %v): %w", txn.commit, err)
		}
	}

	var wantCommitted, wantAll [][]string
	var nCommitted, nAll []int
	for part := 0; part < 2; part++ {
		wantCommitted = append(wantCommitted, concat(onPartition(first, 2, part), onPartition(second, 2, part)))
		wantAll = append(wantAll, concat(onPartition(first, 2, part), onPartition(aborted, 2, part), onPartition(second, 2, part)))
		nCommitted, nAll = append(nCommitted, len(wantCommitted[part])), append(nAll, len(wantAll[part]))
	}
	committed, err := readAll(ctx, e, topic, nCommitted, kgo.ReadCommitted())
	if err != nil {
		return err
	}
	all, err := readAll(ctx, e, topic, nAll, kgo.ReadUncommitted())
	if err != nil {
		return err
	}
	ends, err := e.adm.ListEndOffsets(ctx, topic)
	if err != nil {
		return fmt.Errorf("list end offsets: %w", err)
	}
	for part := 0; part < 2; part++ {
		if err := sameValues(committed[part], wantCommitted[part], fmt.Sprintf("read_committed partition %d", part)); err != nil {
			return err
		}
		if err := sameValues(all[part], wantAll[part], fmt.Sprintf("read_uncommitted partition %d", part)); err != nil {
			return err
		}
		end, ok := ends.Lookup(topic, int32(part))
		if !ok || end.Err != nil || end.Offset != int64(len(wantAll[part])+3) {
			return fmt.Errorf("partition %d end offset %+v, want %d records + 3 markers", part, end, len(wantAll[part]))
		}
	}

	// A second producer with the same transactional.id fences the first.
	p2, err := kgo.NewClient(txnOpts(e, txnID)...)
	if err != nil {
		return err
	}
	defer p2.Close()
	if _, _, err := p2.ProducerID(ctx); err != nil {
		return fmt.Errorf("second producer's init: %w", err)
	}
	fenced := p.BeginTransaction()
	if fenced == nil {
		fenced = txnProduce(ctx, p, topic, 1, []string{"fenced"})
	}
	if end := p.EndTransaction(ctx, kgo.TryCommit); fenced == nil {
		fenced = end
	}
	if fenced == nil {
		return fmt.Errorf("the fenced producer's transaction committed")
	}
	if !isFenced(fenced) {
		return fmt.Errorf("fenced producer failed with %v", fenced)
	}
	if err := p2.BeginTransaction(); err != nil {
		return err
	}
	if err := txnProduce(ctx, p2, topic, 1, []string{"after-fence"}); err != nil {
		return fmt.Errorf("second producer: %w", err)
	}
	if err := p2.EndTransaction(ctx, kgo.TryCommit); err != nil {
		return fmt.Errorf("second producer's commit: %w", err)
	}
	return okDetail{fmt.Sprintf("commit 10, abort 6, commit 8 on 2 partitions: read_committed 18, read_uncommitted 24, "+
		"end offsets +3 markers each; the same transactional.id fenced the first (%v); the second committed", fenced)}
}

func scenarioTransactionsOffsets(ctx context.Context, e *env) error {
	in, out, group := e.name("txo-in"), e.name("txo-out"), e.name("txo-group")
	for _, t := range []string{in, out} {
		if err := createTopic(ctx, e, t, 1); err != nil {
			return err
		}
	}
	const n, firstTxn = 10, 6
	inputs := values("txo", n)
	if _, err := produceSync(ctx, e, in, inputs); err != nil {
		return err
	}
	txnID := e.name("txo-id")
	// One client consumes in the group (read_committed) and produces
	// transactionally: the session sends the polled offsets in the transaction.
	sess, err := kgo.NewGroupTransactSession(append(txnOpts(e, txnID),
		kgo.ConsumerGroup(group), kgo.ConsumeTopics(in), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.RequireStableFetchOffsets())...)
	if err != nil {
		return err
	}
	defer sess.Close()
	poll := func(k int) ([]*kgo.Record, error) {
		var got []*kgo.Record
		for len(got) < k {
			fs := sess.PollRecords(ctx, k-len(got))
			if ctx.Err() != nil {
				return got, fmt.Errorf("group consumer read %d of %d records", len(got), k)
			}
			if err := fs.Err(); err != nil {
				return got, fmt.Errorf("group consumer: %w", err)
			}
			got = append(got, fs.Records()...)
		}
		return got, nil
	}
	transform := func(recs []*kgo.Record) []string {
		var vs []string
		for _, r := range recs {
			vs = append(vs, "out-"+string(r.Value))
		}
		return vs
	}

	if err := sess.Begin(); err != nil {
		return err
	}
	head, err := poll(firstTxn)
	if err != nil {
		return err
	}
	if err := txnProduce(ctx, sess.Client(), out, 1, transform(head)); err != nil {
		return fmt.Errorf("first transaction: %w", err)
	}
	if committed, err := sess.End(ctx, kgo.TryCommit); err != nil || !committed {
		return fmt.Errorf("first transaction: committed %v, %v", committed, err)
	}

	if err := sess.Begin(); err != nil {
		return err
	}
	tail, err := poll(n - firstTxn)
	if err != nil {
		return err
	}
	if err := txnProduce(ctx, sess.Client(), out, 1, transform(tail)); err != nil {
		return fmt.Errorf("second transaction: %w", err)
	}
	// kgo sends a session's offsets only when it commits; to abort after
	// the offsets were sent, send them as it would: AddOffsetsToTxn, then
	// TxnOffsetCommit with the group's generation and member.
	if err := sendTxnOffsets(ctx, sess.Client(), txnID, group, in, tail[len(tail)-1].Offset+1); err != nil {
		return fmt.Errorf("second transaction's offsets: %w", err)
	}
	if _, err := sess.End(ctx, kgo.TryAbort); err != nil {
		return fmt.Errorf("second transaction's abort: %w", err)
	}

	offs, err := e.adm.FetchOffsets(ctx, group)
	if err != nil {
		return fmt.Errorf("fetch offsets: %w", err)
	}
	if o, ok := offs.Lookup(in, 0); !ok || o.Err != nil || o.At != firstTxn {
		return fmt.Errorf("group's committed offset %+v after the aborted transaction, want %d", o, firstTxn)
	}
	outputs := make([]string, n)
	for i, v := range inputs {
		outputs[i] = "out-" + v
	}
	got, err := readAll(ctx, e, out, []int{firstTxn}, kgo.ReadCommitted())
	if err != nil {
		return err
	}
	if err := sameValues(got[0], outputs[:firstTxn], "output read_committed"); err != nil {
		return err
	}
	if got, err = readAll(ctx, e, out, []int{n}, kgo.ReadUncommitted()); err != nil {
		return err
	}
	if err := sameValues(got[0], outputs, "output read_uncommitted"); err != nil {
		return err
	}
	return okDetail{"group consumer read 10 in a GroupTransactSession; txn 1 wrote 6 outputs + offset 6 (End(TryCommit)), " +
		"committed; txn 2 wrote 4 + offset 10 (AddOffsetsToTxn + TxnOffsetCommit), aborted: committed offset 6, " +
		"output read_committed 6, read_uncommitted 10"}
}

// sendTxnOffsets adds the group's offset of partition 0 of topic to cl's
// open transaction.
func sendTxnOffsets(ctx context.Context, cl *kgo.Client, txnID, group, topic string, offset int64) error {
	id, epoch, err := cl.ProducerID(ctx)
	if err != nil {
		return err
	}
	add := kmsg.NewPtrAddOffsetsToTxnRequest()
	add.TransactionalID, add.ProducerID, add.ProducerEpoch, add.Group = txnID, id, epoch, group
	addResp, err := add.RequestWith(ctx, cl)
	if err != nil {
		return err
	}
	if err := kerr.ErrorForCode(addResp.ErrorCode); err != nil {
		return fmt.Errorf("AddOffsetsToTxn: %w", err)
	}
	member, generation := cl.GroupMetadata()
	req := kmsg.NewPtrTxnOffsetCommitRequest()
	req.TransactionalID, req.Group, req.ProducerID, req.ProducerEpoch = txnID, group, id, epoch
	req.MemberID, req.Generation = member, generation
	t := kmsg.NewTxnOffsetCommitRequestTopic()
	t.Topic = topic
	p := kmsg.NewTxnOffsetCommitRequestTopicPartition()
	p.Partition, p.Offset, p.LeaderEpoch = 0, offset, -1
	t.Partitions = append(t.Partitions, p)
	req.Topics = append(req.Topics, t)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return err
	}
	for _, rt := range resp.Topics {
		for _, rp := range rt.Partitions {
			if err := kerr.ErrorForCode(rp.ErrorCode); err != nil {
				return fmt.Errorf("TxnOffsetCommit %s/%d: %w", rt.Topic, rp.Partition, err)
			}
		}
	}
	return nil
}
