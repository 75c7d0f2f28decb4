package main

// The cluster-only scenario: the partition leader killed while producing
// and consuming.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

const (
	failoverBefore = 100 // acknowledged before the kill is asked for
	failoverAfter  = 100 // acknowledged after a new leader is named
	failoverEvery  = 5 * time.Millisecond
)

var stdoutMu sync.Mutex

// killLeader asks the harness (run_matrix.py reads stdout) to SIGKILL the
// partition's leader; it starts it again once a new leader is named.
func killLeader(topic string, partition int32) {
	stdoutMu.Lock()
	defer stdoutMu.Unlock()
	_ = json.NewEncoder(os.Stdout).Encode(map[string]any{
		"event": "kill_leader", "scenario": "leader_failover", "topic": topic, "partition": partition})
}

// partition0 is the topic's partition 0 as the admin client's metadata shows it.
func partition0(ctx context.Context, e *env, topic string) (leader int32, isr int, err error) {
	mctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	md, err := e.adm.Metadata(mctx, topic)
	if err != nil {
		return -1, 0, err
	}
	p, ok := md.Topics[topic].Partitions[0]
	if !ok || p.Err != nil {
		return -1, 0, fmt.Errorf("partition 0 of %s: %v", topic, p.Err)
	}
	return p.Leader, len(p.ISR), nil
}

func waitFullISR(ctx context.Context, e *env, topic string) error {
	for {
		md, err := e.adm.Metadata(ctx, topic)
		full := err == nil && len(md.Topics[topic].Partitions) > 0
		if full {
			for _, p := range md.Topics[topic].Partitions {
				full = full && len(p.ISR) == len(e.brokers)
			}
		}
		if full {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s's ISR never held all %d brokers (last error %v)", topic, len(e.brokers), err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// scenarioLeaderFailover: one partition on every broker; franz-go's
// idempotent (its default) acks=all producer sends a record every 5 ms while
// a consumer reads; after 100 acknowledgements the harness kills the leader.
// Producing goes on until a new leader is named and 100 more are
// acknowledged; then every record sent must have been acknowledged and
// consumed exactly once, in order.
func scenarioLeaderFailover(ctx context.Context, e *env) error {
	if len(e.brokers) < 2 {
		return errUnsupported{"needs a cluster: the harness runs it with run_matrix.py --cluster"}
	}
	topic := e.name("leader-failover")
	if err := createTopic(ctx, e, topic, 1); err != nil {
		return err
	}
	if err := waitFullISR(ctx, e, topic); err != nil {
		return err
	}
	old, _, err := partition0(ctx, e, topic)
	if err != nil {
		return err
	}
	prod, err := kgo.NewClient(kgo.SeedBrokers(e.seeds...), kgo.DefaultProduceTopic(topic),
		kgo.RequiredAcks(kgo.AllISRAcks()), kgo.ProducerLinger(time.Millisecond),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		return err
	}
	defer prod.Close()
	cons, err := kgo.NewClient(kgo.SeedBrokers(e.seeds...), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{
		topic: {0: kgo.NewOffset().AtStart()}}))
	if err != nil {
		return err
	}
	defer cons.Close()

	var mu sync.Mutex
	acked := map[string]int64{}
	var errs []string
	var consumed []*kgo.Record
	stop := make(chan struct{})
	consumerDone := make(chan struct{})
	go func() { // the consumer reads all along, the kill included
		defer close(consumerDone)
		for {
			select {
			case <-stop:
				return
			default:
			}
			pctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
			fs := cons.PollFetches(pctx)
			cancel()
			mu.Lock()
			fs.EachRecord(func(r *kgo.Record) { consumed = append(consumed, r) })
			mu.Unlock()
		}
	}()
	defer func() {
		select {
		case <-stop:
		default:
			close(stop)
		}
		<-consumerDone
	}()
	var sent []string
	send := func() {
		v := fmt.Sprintf("%s-%06d", topic, len(sent))
		sent = append(sent, v)
		prod.Produce(ctx, &kgo.Record{Value: []byte(v), Partition: 0}, func(r *kgo.Record, err error) {
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err.Error())
			} else {
				acked[v] = r.Offset
			}
		})
		time.Sleep(failoverEvery)
	}
	count := func() int { mu.Lock(); defer mu.Unlock(); return len(acked) }

	deadline := time.Now().Add(20 * time.Second)
	for count() < failoverBefore {
		if time.Now().After(deadline) {
			return fmt.Errorf("%d of %d acknowledged before the kill", count(), failoverBefore)
		}
		send()
	}
	killLeader(topic, 0)
	killed := time.Now()
	newLeader, ackedAtChange := int32(-1), -1
	var checked time.Time
	for ackedAtChange < 0 || count() < ackedAtChange+failoverAfter {
		if time.Since(killed) > 60*time.Second {
			mu.Lock()
			defer mu.Unlock()
			return fmt.Errorf("60 s after the kill: new leader %d, %d acknowledged, errors %v", newLeader, len(acked), errs)
		}
		send()
		if newLeader < 0 && time.Since(checked) > 250*time.Millisecond {
			checked = time.Now()
			if l, _, err := partition0(ctx, e, topic); err == nil && l != old && l >= 0 {
				newLeader, ackedAtChange = l, count()
			}
		}
	}
	fctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	err = prod.Flush(fctx)
	cancel()
	if err != nil {
		return fmt.Errorf("flush: %w", err)
	}
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		mu.Lock()
		n := len(consumed)
		mu.Unlock()
		if n >= len(sent) {
			break
		}
	}
	close(stop)
	<-consumerDone

	mu.Lock()
	defer mu.Unlock()
	if len(errs) > 0 {
		return fmt.Errorf("%d delivery errors: %v", len(errs), errs[:min(3, len(errs))])
	}
	if len(acked) != len(sent) {
		return fmt.Errorf("%d of %d acknowledged", len(acked), len(sent))
	}
	if len(consumed) != len(sent) {
		return fmt.Errorf("consumed %d records, sent %d", len(consumed), len(sent))
	}
	for i, r := range consumed {
		if string(r.Value) != sent[i] {
			return fmt.Errorf("record %d consumed is %q, sent %q (lost, duplicated or reordered)", i, r.Value, sent[i])
		}
		if r.Offset != acked[sent[i]] {
			return fmt.Errorf("record %d consumed at offset %d, acknowledged at %d", i, r.Offset, acked[sent[i]])
		}
	}
	return okDetail{fmt.Sprintf("%d records, leader %d killed, %d took over: all acknowledged and consumed once, in order",
		len(sent), old, newLeader)}
}
