// Consumer-group scenarios through sarama.ConsumerGroup: a group of three
// with a rebalance, offsets resumed across consumers, and the admin view of
// a live group.
package main

import (
	"context"
	"fmt"
	"log"
	"sort"
	"sync"
	"time"

	"github.com/IBM/sarama"
)

type seenRecord struct {
	partition int32
	offset    int64
	value     string
}

// member is one sarama.ConsumerGroup consuming in its own goroutine. It
// commits what it consumed (auto-commit is off) and tracks the partitions
// its current session claims.
type member struct {
	group sarama.ConsumerGroup
	topic string
	mu    sync.Mutex
	owns  []int32
	seen  []seenRecord
	err   error
	// onRecord, when set, may stop the member after a record (offsets_resume).
	onRecord func(s sarama.ConsumerGroupSession, m *sarama.ConsumerMessage) bool

	stop context.CancelFunc
	done chan struct{}
}

func newMember(e *env, groupID, topic string) (*member, error) {
	g, err := sarama.NewConsumerGroup(e.seeds, groupID, newConfig())
	if err != nil {
		return nil, fmt.Errorf("consumer group: %w", err)
	}
	return &member{group: g, topic: topic, done: make(chan struct{})}, nil
}

func startMember(ctx context.Context, e *env, groupID, topic string) (*member, error) {
	e.at("consuming in group " + groupID)
	m, err := newMember(e, groupID, topic)
	if err != nil {
		return nil, err
	}
	m.start(ctx)
	return m, nil
}

func (m *member) start(ctx context.Context) {
	cctx, cancel := context.WithCancel(ctx)
	m.stop = cancel
	go func() {
		for {
			select {
			case err, ok := <-m.group.Errors():
				if ok && cctx.Err() == nil {
					m.fail(err)
				}
				if !ok {
					return
				}
			case <-cctx.Done():
				return
			}
		}
	}()
	go func() {
		defer close(m.done)
		// Consume returns at every rebalance; joining again is the member's job.
		for cctx.Err() == nil {
			if err := m.group.Consume(cctx, []string{m.topic}, m); err != nil && cctx.Err() == nil {
				m.fail(fmt.Errorf("consume: %w", err))
				_ = sleep(cctx, 200*time.Millisecond)
			}
		}
	}()
}

func (m *member) Setup(s sarama.ConsumerGroupSession) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.owns = append([]int32(nil), s.Claims()[m.topic]...)
	sort.Slice(m.owns, func(i, j int) bool { return m.owns[i] < m.owns[j] })
	return nil
}

func (m *member) Cleanup(s sarama.ConsumerGroupSession) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.owns = nil
	return nil
}

func (m *member) ConsumeClaim(s sarama.ConsumerGroupSession, claim sarama.ConsumerGroupClaim) error {
	for {
		select {
		case msg, ok := <-claim.Messages():
			if !ok {
				return nil
			}
			if m.onRecord != nil {
				if !m.onRecord(s, msg) {
					return nil
				}
			} else {
				s.MarkMessage(msg, "")
				// Commit once the buffered records are drained, not per record:
				// the commit shares the coordinator connection with fetch
				// long-polls, which brokers answer one request at a time.
				if len(claim.Messages()) == 0 {
					s.Commit()
				}
			}
			m.mu.Lock()
			m.seen = append(m.seen, seenRecord{msg.Partition, msg.Offset, string(msg.Value)})
			m.mu.Unlock()
		case <-s.Context().Done():
			return nil
		}
	}
}

// fail notes a consume error. Errors such as NOT_COORDINATOR while the
// offsets topic loads are transient (Sarama joins again), so they are not
// fatal: the scenario's own bounded waits decide, and report the last one.
func (m *member) fail(err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.err = err
	log.Printf("group member: %v", err)
}

// close stops consuming and leaves the group (Close sends LeaveGroup).
func (m *member) close() {
	m.stop()
	<-m.done
	_ = m.group.Close()
}

func (m *member) snapshot() ([]int32, []seenRecord, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]int32(nil), m.owns...), append([]seenRecord(nil), m.seen...), m.err
}

// waitAssignment waits until the members claim disjoint, non-empty partition
// sets that together cover all n partitions.
func waitAssignment(ctx context.Context, ms []*member, n int) error {
	for {
		covered := map[int32]int{}
		ok := true
		last := ""
		for i, m := range ms {
			owns, _, err := m.snapshot()
			last += fmt.Sprintf(" m%d=%v", i, owns)
			if err != nil {
				last += fmt.Sprintf(" (last error: %v)", err)
			}
			ok = ok && len(owns) > 0
			for _, p := range owns {
				covered[p]++
			}
		}
		if ok && len(covered) == n {
			disjoint := true
			for _, c := range covered {
				disjoint = disjoint && c == 1
			}
			if disjoint {
				return nil
			}
		}
		if err := sleep(ctx, 100*time.Millisecond); err != nil {
			return fmt.Errorf("no disjoint cover of %d partitions (last:%s)", n, last)
		}
	}
}

// waitSeen waits until the members together consumed every value in want.
func waitSeen(ctx context.Context, ms []*member, want []string) error {
	for {
		seen := map[string]bool{}
		errs := ""
		for i, m := range ms {
			_, rs, err := m.snapshot()
			if err != nil {
				errs += fmt.Sprintf(" member %d last error: %v;", i, err)
			}
			for _, r := range rs {
				seen[r.value] = true
			}
		}
		missing := 0
		for _, v := range want {
			if !seen[v] {
				missing++
			}
		}
		if missing == 0 {
			return nil
		}
		if err := sleep(ctx, 100*time.Millisecond); err != nil {
			return fmt.Errorf("%d of %d records never consumed;%s", missing, len(want), errs)
		}
	}
}

// produceSpread produces perPartition values to each of n partitions.
func produceSpread(e *env, topic string, n, perPartition int, tag string) ([]string, error) {
	var msgs []*sarama.ProducerMessage
	var vals []string
	for p := 0; p < n; p++ {
		for i := 0; i < perPartition; i++ {
			v := fmt.Sprintf("%s-p%d-%03d", tag, p, i)
			vals = append(vals, v)
			msgs = append(msgs, &sarama.ProducerMessage{Topic: topic, Partition: int32(p), Value: sarama.StringEncoder(v)})
		}
	}
	err := sendAll(e, msgs, func(c *sarama.Config) { c.Producer.Partitioner = sarama.NewManualPartitioner })
	return vals, err
}

func committed(e *env, group, topic string, partitions int32) (map[int32]int64, error) {
	ps := make([]int32, partitions)
	for i := range ps {
		ps[i] = int32(i)
	}
	resp, err := e.admin.ListConsumerGroupOffsets(group, map[string][]int32{topic: ps})
	if err != nil {
		return nil, err
	}
	out := map[int32]int64{}
	for _, p := range ps {
		b := resp.GetBlock(topic, p)
		if b == nil {
			return nil, fmt.Errorf("no committed offset block for partition %d", p)
		}
		if b.Err != sarama.ErrNoError {
			return nil, fmt.Errorf("partition %d: %w", p, b.Err)
		}
		out[p] = b.Offset
	}
	return out, nil
}

func scenarioGroupOfThree(ctx context.Context, e *env) error {
	topic, group := e.name("group3"), e.name("group3-g")
	const partitions = 6
	if err := createTopic(ctx, e, topic, partitions); err != nil {
		return err
	}
	var ms []*member
	defer func() {
		for _, m := range ms {
			m.close()
		}
	}()
	for i := 0; i < 3; i++ {
		m, err := startMember(ctx, e, group, topic)
		if err != nil {
			return err
		}
		ms = append(ms, m)
	}
	if err := waitAssignment(ctx, ms, partitions); err != nil {
		return fmt.Errorf("three members: %w", err)
	}
	first, err := produceSpread(e, topic, partitions, 10, "first")
	if err != nil {
		return err
	}
	if err := waitSeen(ctx, ms, first); err != nil {
		return fmt.Errorf("three members: %w", err)
	}
	// The third member leaves; the other two must take over its partitions
	// from its committed offsets.
	leaver := ms[2]
	ms = ms[:2]
	leaver.close()
	if err := waitAssignment(ctx, ms, partitions); err != nil {
		return fmt.Errorf("after one left: %w", err)
	}
	second, err := produceSpread(e, topic, partitions, 10, "second")
	if err != nil {
		return err
	}
	if err := waitSeen(ctx, ms, second); err != nil {
		return fmt.Errorf("after one left: %w", err)
	}
	// Every partition's committed offset reaches its end: 20 records each.
	for {
		offs, err := committed(e, group, topic, partitions)
		good := 0
		for _, o := range offs {
			if o == 20 {
				good++
			}
		}
		if err == nil && good == partitions {
			return nil
		}
		if serr := sleep(ctx, 100*time.Millisecond); serr != nil {
			return fmt.Errorf("committed offsets %v (err %v), want 20 on all %d partitions", offs, err, partitions)
		}
	}
}

func scenarioOffsetsResume(ctx context.Context, e *env) error {
	topic, group := e.name("resume"), e.name("resume-g")
	if err := createTopic(ctx, e, topic, 1); err != nil {
		return err
	}
	vals := values("resume", 10)
	if err := sendAll(e, messages(topic, vals), nil); err != nil {
		return err
	}
	first, err := newMember(e, group, topic)
	if err != nil {
		return err
	}
	committedFour := make(chan struct{})
	// Mark and commit through record 3 (the group's position becomes
	// offset 4), then stop consuming.
	first.onRecord = func(s sarama.ConsumerGroupSession, msg *sarama.ConsumerMessage) bool {
		if msg.Offset > 3 {
			return false
		}
		if msg.Offset == 3 {
			s.MarkMessage(msg, "")
			s.Commit()
			close(committedFour)
			return false
		}
		return true
	}
	first.start(ctx)
	select {
	case <-committedFour:
	case <-ctx.Done():
		first.close()
		_, _, ferr := first.snapshot()
		return fmt.Errorf("first consumer never reached offset 3 (err %v)", ferr)
	}
	first.close()
	offs, err := committed(e, group, topic, 1)
	if err != nil || offs[0] != 4 {
		return fmt.Errorf("committed offset %v (err %v), want 4", offs, err)
	}
	second, err := startMember(ctx, e, group, topic)
	if err != nil {
		return err
	}
	defer second.close()
	if err := waitSeen(ctx, []*member{second}, vals[4:]); err != nil {
		return fmt.Errorf("second consumer: %w", err)
	}
	_, seen, _ := second.snapshot()
	if seen[0].offset != 4 {
		return fmt.Errorf("second consumer started at offset %d, want 4", seen[0].offset)
	}
	return nil
}

func scenarioAdminGroups(ctx context.Context, e *env) error {
	topic, group := e.name("admin-groups"), e.name("admin-groups-g")
	if err := createTopic(ctx, e, topic, 2); err != nil {
		return err
	}
	m, err := startMember(ctx, e, group, topic)
	if err != nil {
		return err
	}
	defer m.close()
	if err := waitAssignment(ctx, []*member{m}, 2); err != nil {
		return err
	}
	listed, err := e.admin.ListConsumerGroups()
	if err != nil {
		return fmt.Errorf("list groups: %w", err)
	}
	if pt, ok := listed[group]; !ok || pt != "consumer" {
		return fmt.Errorf("list groups: %s has protocol type %q (listed %v), want consumer", group, pt, ok)
	}
	ds, err := e.admin.DescribeConsumerGroups([]string{group})
	if err != nil {
		return fmt.Errorf("describe groups: %w", err)
	}
	if len(ds) != 1 || ds[0].Err != sarama.ErrNoError {
		return fmt.Errorf("describe groups: %d results, %+v", len(ds), ds)
	}
	d := ds[0]
	if d.State != "Stable" || len(d.Members) != 1 {
		return fmt.Errorf("group state %s with %d members, want Stable with 1", d.State, len(d.Members))
	}
	for _, md := range d.Members {
		a, err := md.GetMemberAssignment()
		if err != nil {
			return fmt.Errorf("member assignment: %w", err)
		}
		if len(a.Topics[topic]) != 2 {
			return fmt.Errorf("member assigned %v, want both partitions of %s", a.Topics, topic)
		}
	}
	return nil
}
