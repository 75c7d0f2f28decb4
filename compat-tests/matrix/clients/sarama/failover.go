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

	"github.com/IBM/sarama"
)

const (
	failoverBefore = 100 // acknowledged before the kill is asked for
	failoverAfter  = 100 // acknowledged after a new leader is named
	failoverEvery  = 5 * time.Millisecond
)

// killLeader asks the harness (run_matrix.py reads stdout) to SIGKILL the
// partition's leader; it starts it again once a new leader is named.
func killLeader(topic string, partition int32) {
	_ = json.NewEncoder(os.Stdout).Encode(map[string]any{
		"event": "kill_leader", "scenario": "leader_failover", "topic": topic, "partition": partition})
}

// partition0 is partition 0's leader and ISR size after a metadata refresh.
func partition0(c sarama.Client, topic string) (int32, int, error) {
	if err := c.RefreshMetadata(topic); err != nil {
		return -1, 0, err
	}
	leader, err := c.Leader(topic, 0)
	if err != nil {
		return -1, 0, err
	}
	isr, err := c.InSyncReplicas(topic, 0)
	return leader.ID(), len(isr), err
}

// scenarioLeaderFailover: one partition on every broker; an idempotent
// acks=all SyncProducer sends a record every 5 ms (each send waits for its
// acknowledgement: Sarama's idempotent producer allows one request in
// flight) while a partition consumer reads; after 100 acknowledgements the
// harness kills the leader. Producing goes on until a new leader is named
// and 100 more are acknowledged; then every record sent must have been
// acknowledged and consumed exactly once, in order.
func scenarioLeaderFailover(ctx context.Context, e *env) error {
	if len(e.brokers) < 2 {
		return errUnsupported{"needs a cluster: the harness runs it with run_matrix.py --cluster"}
	}
	topic := e.name("leader-failover")
	if err := createTopic(ctx, e, topic, 1); err != nil {
		return err
	}
	// Its own client: the shared one's connections to the killed broker
	// would slow the scenarios after this one.
	cl, err := sarama.NewClient(e.seeds, newConfig())
	if err != nil {
		return err
	}
	defer cl.Close()
	for {
		if _, n, err := partition0(cl, topic); err == nil && n == len(e.brokers) {
			break
		}
		if err := sleep(ctx, 200*time.Millisecond); err != nil {
			return fmt.Errorf("%s's ISR never held all %d brokers", topic, len(e.brokers))
		}
	}
	old, _, err := partition0(cl, topic)
	if err != nil {
		return err
	}
	pc := newConfig()
	pc.Producer.Idempotent = true
	pc.Producer.RequiredAcks = sarama.WaitForAll
	pc.Net.MaxOpenRequests = 1
	pc.Producer.Partitioner = sarama.NewManualPartitioner
	// Retries bounded by time, as idempotent Kafka clients' are (Java's
	// delivery.timeout.ms, 120 s; librdkafka's message.timeout.ms): 60 s at
	// 250 ms. 15 s ran out once on a loaded machine during the failover.
	pc.Producer.Retry.Max = 240
	pc.Producer.Retry.Backoff = 250 * time.Millisecond
	prod, err := sarama.NewSyncProducer(e.seeds, pc)
	if err != nil {
		return fmt.Errorf("producer: %w", err)
	}
	defer prod.Close()
	cons, err := sarama.NewConsumer(e.seeds, newConfig())
	if err != nil {
		return err
	}
	defer cons.Close()
	part, err := cons.ConsumePartition(topic, 0, sarama.OffsetOldest)
	if err != nil {
		return fmt.Errorf("consume partition: %w", err)
	}
	defer part.Close()
	var mu sync.Mutex
	var consumed []*sarama.ConsumerMessage
	var consumeErrs []string
	go func() {
		for {
			select {
			case m, ok := <-part.Messages():
				if !ok {
					return
				}
				mu.Lock()
				consumed = append(consumed, m)
				mu.Unlock()
			case err, ok := <-part.Errors():
				if !ok {
					return
				}
				mu.Lock() // the partition consumer retries by itself; kept for the detail
				consumeErrs = append(consumeErrs, err.Error())
				mu.Unlock()
			}
		}
	}()

	var sent []string
	var acked []int64
	send := func() error {
		v := fmt.Sprintf("%s-%06d", topic, len(sent))
		sent = append(sent, v)
		_, offset, err := prod.SendMessage(&sarama.ProducerMessage{Topic: topic, Partition: 0, Value: sarama.StringEncoder(v)})
		if err != nil {
			return fmt.Errorf("record %d not delivered: %w", len(sent)-1, err)
		}
		acked = append(acked, offset)
		return sleep(ctx, failoverEvery)
	}
	for len(acked) < failoverBefore {
		if err := send(); err != nil {
			return err
		}
	}
	killLeader(topic, 0)
	killed := time.Now()
	newLeader, ackedAtChange := int32(-1), -1
	var checked time.Time
	for ackedAtChange < 0 || len(acked) < ackedAtChange+failoverAfter {
		if time.Since(killed) > 60*time.Second {
			return fmt.Errorf("60 s after the kill: new leader %d, %d acknowledged", newLeader, len(acked))
		}
		if err := send(); err != nil {
			return err
		}
		if newLeader < 0 && time.Since(checked) > 250*time.Millisecond {
			checked = time.Now()
			if l, _, err := partition0(cl, topic); err == nil && l != old && l >= 0 {
				newLeader, ackedAtChange = l, len(acked)
			}
		}
	}
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		mu.Lock()
		n := len(consumed)
		mu.Unlock()
		if n >= len(sent) {
			break
		}
	}
	time.Sleep(500 * time.Millisecond) // anything more would be a duplicate
	mu.Lock()
	defer mu.Unlock()
	if len(consumed) != len(sent) {
		return fmt.Errorf("consumed %d records, sent %d (consumer errors: %v)", len(consumed), len(sent), consumeErrs)
	}
	for i, m := range consumed {
		if string(m.Value) != sent[i] || m.Offset != acked[i] {
			return fmt.Errorf("record %d consumed is %q at %d, sent %q acknowledged at %d (lost, duplicated or reordered)",
				i, m.Value, m.Offset, sent[i], acked[i])
		}
	}
	return okDetail{fmt.Sprintf("%d records, leader %d killed, %d took over: all acknowledged and consumed once, in order",
		len(sent), old, newLeader)}
}
