package main

// Transactions: commit, abort and fencing (scenarioTransactions), and
// consume-transform-produce with the offsets in the transaction
// (scenarioTransactionsOffsets: a ConsumerGroup session's messages, their
// offsets sent with AddMessageToTxnWithGroupMetadata).

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/IBM/sarama"
)

// txnProducer is a transactional SyncProducer; NewSyncProducer already
// sends InitProducerId.
func txnProducer(e *env, txnID string) (sarama.SyncProducer, error) {
	c := newConfig()
	// What Sarama requires for a transactional producer.
	c.Producer.Idempotent = true
	c.Producer.RequiredAcks = sarama.WaitForAll
	c.Producer.Retry.Max = 5
	c.Net.MaxOpenRequests = 1
	c.Producer.Transaction.ID = txnID
	c.Producer.Transaction.Timeout = 30 * time.Second
	c.Producer.Partitioner = sarama.NewManualPartitioner // ProducerMessage.Partition
	return sarama.NewSyncProducer(e.seeds, c)
}

// txnMessages spreads vals round-robin over the partitions.
func txnMessages(topic string, partitions int32, vals []string) []*sarama.ProducerMessage {
	msgs := messages(topic, vals)
	for i, m := range msgs {
		m.Partition = int32(i) % partitions
	}
	return msgs
}

// readIsolated reads want[p] records of each partition p from the start
// with the isolation level, then waits 500 ms more so that an extra one
// (an aborted record, a control record) shows; values per partition.
func readIsolated(ctx context.Context, e *env, topic string, want []int, level sarama.IsolationLevel) ([][]string, error) {
	e.at("reading " + topic)
	c := newConfig()
	c.Consumer.IsolationLevel = level
	cons, err := sarama.NewConsumer(e.seeds, c)
	if err != nil {
		return nil, err
	}
	defer cons.Close()
	got := make([][]string, len(want))
	for p, n := range want {
		pc, err := cons.ConsumePartition(topic, int32(p), sarama.OffsetOldest)
		if err != nil {
			return nil, fmt.Errorf("consume partition %d: %w", p, err)
		}
		msgs, err := readN(ctx, pc, n)
		if err == nil {
			select {
			case m := <-pc.Messages():
				msgs = append(msgs, m)
			case <-time.After(500 * time.Millisecond):
			}
		}
		pc.Close()
		if err != nil {
			return nil, fmt.Errorf("partition %d: %w", p, err)
		}
		for _, m := range msgs {
			got[p] = append(got[p], string(m.Value))
		}
	}
	return got, nil
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

func scenarioTransactions(ctx context.Context, e *env) error {
	topic, txnID := e.name("txn"), e.name("txn-id")
	if err := createTopic(ctx, e, topic, 2); err != nil {
		return err
	}
	first, aborted, second := values("commit1", 10), values("abort", 6), values("commit2", 8)
	e.at("initializing the transactional producer")
	p, err := txnProducer(e, txnID)
	if err != nil {
		return fmt.Errorf("transactional producer: %w", err)
	}
	defer p.Close()
	for _, txn := range []struct {
		vals   []string
		commit bool
	}{{first, true}, {aborted, false}, {second, true}} {
		e.at(fmt.Sprintf("in a transaction (commit %v)", txn.commit))
		if err := p.BeginTxn(); err != nil {
			return fmt.Errorf("begin: %w", err)
		}
		// SendMessages waits for the acknowledgements: the aborted
		// transaction's records are in the log before the abort.
		if err := p.SendMessages(txnMessages(topic, 2, txn.vals)); err != nil {
			return fmt.Errorf("produce in a transaction: %w", err)
		}
		end := p.CommitTxn
		if !txn.commit {
			end = p.AbortTxn
		}
		if err := end(); err != nil {
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
	committed, err := readIsolated(ctx, e, topic, nCommitted, sarama.ReadCommitted)
	if err != nil {
		return fmt.Errorf("read_committed: %w", err)
	}
	all, err := readIsolated(ctx, e, topic, nAll, sarama.ReadUncommitted)
	if err != nil {
		return fmt.Errorf("read_uncommitted: %w", err)
	}
	for part := 0; part < 2; part++ {
		if err := sameValues(committed[part], wantCommitted[part], fmt.Sprintf("read_committed partition %d", part)); err != nil {
			return err
		}
		if err := sameValues(all[part], wantAll[part], fmt.Sprintf("read_uncommitted partition %d", part)); err != nil {
			return err
		}
		end, err := e.client.GetOffset(topic, int32(part), sarama.OffsetNewest)
		if err != nil || end != int64(len(wantAll[part])+3) {
			return fmt.Errorf("partition %d end offset %d (%v), want %d records + 3 markers", part, end, err, len(wantAll[part]))
		}
	}

	// A second producer with the same transactional.id fences the first.
	e.at("fencing")
	p2, err := txnProducer(e, txnID)
	if err != nil {
		return fmt.Errorf("second producer: %w", err)
	}
	defer p2.Close()
	fenced := p.BeginTxn()
	if fenced == nil {
		_, _, fenced = p.SendMessage(&sarama.ProducerMessage{Topic: topic, Partition: 0, Value: sarama.StringEncoder("fenced")})
	}
	if end := p.CommitTxn(); fenced == nil {
		fenced = end
	}
	if fenced == nil {
		return fmt.Errorf("the fenced producer's transaction committed")
	}
	if !errors.Is(fenced, sarama.ErrProducerFenced) && !errors.Is(fenced, sarama.ErrInvalidProducerEpoch) {
		return fmt.Errorf("fenced producer failed with %v", fenced)
	}
	if err := p2.BeginTxn(); err != nil {
		return err
	}
	if _, _, err := p2.SendMessage(&sarama.ProducerMessage{Topic: topic, Partition: 0, Value: sarama.StringEncoder("after-fence")}); err != nil {
		return fmt.Errorf("second producer: %w", err)
	}
	if err := p2.CommitTxn(); err != nil {
		return fmt.Errorf("second producer's commit: %w", err)
	}
	return okDetail{fmt.Sprintf("commit 10, abort 6, commit 8 on 2 partitions: read_committed 18, read_uncommitted 24, "+
		"end offsets +3 markers each; the same transactional.id fenced the first (%s); the second committed", fencedName(fenced))}
}

// fencedName names the fencing error: Sarama's KError text for code 90 is
// "Unknown error, how did this happen?".
func fencedName(err error) string {
	switch {
	case errors.Is(err, sarama.ErrProducerFenced):
		return "ErrProducerFenced (PRODUCER_FENCED, 90)"
	case errors.Is(err, sarama.ErrInvalidProducerEpoch):
		return "ErrInvalidProducerEpoch (INVALID_PRODUCER_EPOCH, 47)"
	}
	return err.Error()
}

// txnHandler hands a ConsumerGroup session and its messages to the scenario,
// which transforms them while the session lasts.
type txnHandler struct {
	sessions chan sarama.ConsumerGroupSession
	msgs     chan *sarama.ConsumerMessage
}

func (h *txnHandler) Setup(s sarama.ConsumerGroupSession) error {
	h.sessions <- s
	return nil
}

func (h *txnHandler) Cleanup(sarama.ConsumerGroupSession) error { return nil }

func (h *txnHandler) ConsumeClaim(s sarama.ConsumerGroupSession, claim sarama.ConsumerGroupClaim) error {
	for {
		select {
		case m, ok := <-claim.Messages():
			if !ok {
				return nil
			}
			h.msgs <- m
		case <-s.Context().Done():
			return nil
		}
	}
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
	if err := sendAll(e, messages(in, inputs), nil); err != nil {
		return err
	}
	c := newConfig()
	c.Consumer.IsolationLevel = sarama.ReadCommitted
	g, err := sarama.NewConsumerGroup(e.seeds, group, c)
	if err != nil {
		return fmt.Errorf("consumer group: %w", err)
	}
	defer g.Close()
	h := &txnHandler{sessions: make(chan sarama.ConsumerGroupSession, 4), msgs: make(chan *sarama.ConsumerMessage, n)}
	gctx, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		for gctx.Err() == nil {
			_ = g.Consume(gctx, []string{in}, h) // returns at a rebalance: join again
		}
	}()
	e.at("waiting for the group's session")
	var sess sarama.ConsumerGroupSession
	select {
	case sess = <-h.sessions:
	case <-ctx.Done():
		return fmt.Errorf("no group session")
	}
	e.at("consuming in the group")
	var got []*sarama.ConsumerMessage
	for len(got) < n {
		select {
		case m := <-h.msgs:
			got = append(got, m)
		case <-ctx.Done():
			return fmt.Errorf("group consumer read %d of %d records", len(got), n)
		}
	}
	var gotVals []string
	for _, m := range got {
		gotVals = append(gotVals, string(m.Value))
	}
	if err := sameValues(gotVals, inputs, "input read by the group consumer"); err != nil {
		return err
	}

	e.at("initializing the transactional producer")
	p, err := txnProducer(e, e.name("txo-id"))
	if err != nil {
		return fmt.Errorf("transactional producer: %w", err)
	}
	defer p.Close()
	md := sarama.NewConsumerGroupMetadataFromSession(sess, group, nil)
	transform := func(ms []*sarama.ConsumerMessage) []*sarama.ProducerMessage {
		var vals []string
		for _, m := range ms {
			vals = append(vals, "out-"+string(m.Value))
		}
		return messages(out, vals)
	}
	for i, txn := range []struct {
		msgs   []*sarama.ConsumerMessage
		commit bool
	}{{got[:firstTxn], true}, {got[firstTxn:], false}} {
		e.at(fmt.Sprintf("transaction %d", i+1))
		if err := p.BeginTxn(); err != nil {
			return fmt.Errorf("transaction %d: begin: %w", i+1, err)
		}
		if err := p.SendMessages(transform(txn.msgs)); err != nil {
			return fmt.Errorf("transaction %d: produce: %w", i+1, err)
		}
		// The offset after the transaction's last input message.
		if err := p.AddMessageToTxnWithGroupMetadata(txn.msgs[len(txn.msgs)-1], md, nil); err != nil {
			return fmt.Errorf("transaction %d: AddMessageToTxnWithGroupMetadata: %w", i+1, err)
		}
		end := p.CommitTxn
		if !txn.commit {
			end = p.AbortTxn
		}
		if err := end(); err != nil {
			return fmt.Errorf("transaction %d: end (commit %v): %w", i+1, txn.commit, err)
		}
	}
	e.at("fetching the committed offset")
	offs, err := committed(e, group, in, 1)
	if err != nil {
		return fmt.Errorf("committed offset: %w", err)
	}
	if offs[0] != firstTxn {
		return fmt.Errorf("group's committed offset %d after the aborted transaction, want %d", offs[0], firstTxn)
	}
	stop()
	outputs := make([]string, n)
	for i, v := range inputs {
		outputs[i] = "out-" + v
	}
	read, err := readIsolated(ctx, e, out, []int{firstTxn}, sarama.ReadCommitted)
	if err != nil {
		return fmt.Errorf("output read_committed: %w", err)
	}
	if err := sameValues(read[0], outputs[:firstTxn], "output read_committed"); err != nil {
		return err
	}
	if read, err = readIsolated(ctx, e, out, []int{n}, sarama.ReadUncommitted); err != nil {
		return fmt.Errorf("output read_uncommitted: %w", err)
	}
	if err := sameValues(read[0], outputs, "output read_uncommitted"); err != nil {
		return err
	}
	return okDetail{fmt.Sprintf("group consumer read 10 (generation %d); txn 1 wrote 6 outputs + offset 6 "+
		"(AddMessageToTxnWithGroupMetadata), committed; txn 2 wrote 4 + offset 10, aborted: committed offset 6, "+
		"output read_committed 6, read_uncommitted 10", md.GenerationID)}
}
