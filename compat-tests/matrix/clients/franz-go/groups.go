// Consumer-group scenarios: a group of three with a rebalance, offsets
// resumed across consumers, and the admin view of a live group.
package main

import (
	"context"
	"fmt"
	"log"
	"sort"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// member is one group consumer polling in its own goroutine, committing what
// it consumed after every poll and tracking the partitions it owns.
type member struct {
	cl   *kgo.Client
	mu   sync.Mutex
	owns map[int32]bool
	seen []string
	err  error

	stop context.CancelFunc
	done chan struct{}
}

func startMember(ctx context.Context, e *env, group, topic string) (*member, error) {
	m := &member{owns: map[int32]bool{}, done: make(chan struct{})}
	change := func(add bool) func(context.Context, *kgo.Client, map[string][]int32) {
		return func(_ context.Context, _ *kgo.Client, ps map[string][]int32) {
			m.mu.Lock()
			defer m.mu.Unlock()
			for _, p := range ps[topic] {
				if add {
					m.owns[p] = true
				} else {
					delete(m.owns, p)
				}
			}
		}
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.seeds...), kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit(),
		kgo.OnPartitionsAssigned(change(true)), kgo.OnPartitionsRevoked(change(false)), kgo.OnPartitionsLost(change(false)))
	if err != nil {
		return nil, err
	}
	m.cl = cl
	pctx, cancel := context.WithCancel(ctx)
	m.stop = cancel
	go m.poll(pctx)
	return m, nil
}

func (m *member) poll(ctx context.Context) {
	defer close(m.done)
	for ctx.Err() == nil {
		fs := m.cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return
		}
		for _, fe := range fs.Errors() {
			m.fail(fmt.Errorf("fetch %s/%d: %w", fe.Topic, fe.Partition, fe.Err))
		}
		recs := fs.Records()
		if len(recs) == 0 {
			continue
		}
		if err := m.cl.CommitRecords(ctx, recs...); err != nil && ctx.Err() == nil {
			m.fail(fmt.Errorf("commit: %w", err))
		}
		m.mu.Lock()
		for _, r := range recs {
			m.seen = append(m.seen, string(r.Value))
		}
		m.mu.Unlock()
	}
}

// fail notes a fetch or commit error. Some are transient (a commit racing a
// rebalance), so they are not fatal: the scenario's own bounded waits decide,
// and report the last one.
func (m *member) fail(err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.err = err
	log.Printf("group member: %v", err)
}

// close stops polling and leaves the group (kgo's Close sends LeaveGroup).
func (m *member) close() {
	m.stop()
	<-m.done
	m.cl.Close()
}

func (m *member) snapshot() (owns []int32, seen []string, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for p := range m.owns {
		owns = append(owns, p)
	}
	sort.Slice(owns, func(i, j int) bool { return owns[i] < owns[j] })
	return owns, append([]string(nil), m.seen...), m.err
}

// waitAssignment waits until the members own disjoint partition sets, each
// non-empty, together covering all n partitions.
func waitAssignment(ctx context.Context, ms []*member, n int) error {
	var last string
	for {
		covered := map[int32]int{}
		ok := true
		last = ""
		for i, m := range ms {
			owns, _, err := m.snapshot()
			last += fmt.Sprintf(" m%d=%v", i, owns)
			if err != nil {
				last += fmt.Sprintf(" (last error: %v)", err)
			}
			if len(owns) == 0 {
				ok = false
			}
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
			_, vs, err := m.snapshot()
			if err != nil {
				errs += fmt.Sprintf(" member %d last error: %v;", i, err)
			}
			for _, v := range vs {
				seen[v] = true
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
func produceSpread(ctx context.Context, e *env, topic string, n int, perPartition int, tag string) ([]string, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.seeds...), kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	var recs []*kgo.Record
	var vals []string
	for p := 0; p < n; p++ {
		for i := 0; i < perPartition; i++ {
			v := fmt.Sprintf("%s-p%d-%03d", tag, p, i)
			vals = append(vals, v)
			recs = append(recs, &kgo.Record{Value: []byte(v), Partition: int32(p)})
		}
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		return nil, fmt.Errorf("produce: %w", err)
	}
	return vals, nil
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
	first, err := produceSpread(ctx, e, topic, partitions, 10, "first")
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
	second, err := produceSpread(ctx, e, topic, partitions, 10, "second")
	if err != nil {
		return err
	}
	if err := waitSeen(ctx, ms, second); err != nil {
		return fmt.Errorf("after one left: %w", err)
	}
	// Every partition's committed offset is its end: 20 records each.
	for {
		offs, err := e.adm.FetchOffsets(ctx, group)
		if err == nil && offs.Error() == nil {
			good := 0
			for p := int32(0); p < partitions; p++ {
				if o, ok := offs.Lookup(topic, p); ok && o.At == 20 {
					good++
				}
			}
			if good == partitions {
				return nil
			}
		}
		if serr := sleep(ctx, 100*time.Millisecond); serr != nil {
			return fmt.Errorf("committed offsets never reached 20 on all partitions: %v %v", offs, err)
		}
	}
}

func scenarioOffsetsResume(ctx context.Context, e *env) error {
	topic, group := e.name("resume"), e.name("resume-g")
	if err := createTopic(ctx, e, topic, 1); err != nil {
		return err
	}
	vals := values("resume", 10)
	if _, err := produceSync(ctx, e, topic, vals); err != nil {
		return err
	}
	groupOpts := func() []kgo.Opt {
		return []kgo.Opt{kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit()}
	}
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(e.seeds...)}, groupOpts()...)...)
	if err != nil {
		return err
	}
	got, err := pollN(ctx, cl, 4)
	if err == nil {
		err = checkValues(got[:4], vals[:4], 0)
	}
	if err == nil {
		// Commit through record 3: the group's position becomes offset 4.
		err = cl.CommitRecords(ctx, got[3])
	}
	cl.Close()
	if err != nil {
		return fmt.Errorf("first consumer: %w", err)
	}
	offs, err := e.adm.FetchOffsets(ctx, group)
	if err != nil {
		return fmt.Errorf("fetch offsets: %w", err)
	}
	if o, ok := offs.Lookup(topic, 0); !ok || o.Err != nil || o.At != 4 {
		return fmt.Errorf("committed offset %+v, want 4", o)
	}
	got, err = consumeN(ctx, e, 6, groupOpts()...)
	if err != nil {
		return fmt.Errorf("second consumer: %w", err)
	}
	return checkValues(got, vals[4:], 4)
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
	listed, err := e.adm.ListGroups(ctx)
	if err != nil {
		return fmt.Errorf("list groups: %w", err)
	}
	lg, ok := listed[group]
	if !ok {
		return fmt.Errorf("list groups does not show %s (%d groups listed)", group, len(listed))
	}
	if lg.ProtocolType != "consumer" {
		return fmt.Errorf("listed group protocol type %q, want consumer", lg.ProtocolType)
	}
	described, err := e.adm.DescribeGroups(ctx, group)
	if err != nil {
		return fmt.Errorf("describe groups: %w", err)
	}
	dg, ok := described[group]
	if !ok || dg.Err != nil {
		return fmt.Errorf("describe group %s: %+v", group, dg.Err)
	}
	if dg.State != "Stable" || len(dg.Members) != 1 {
		return fmt.Errorf("group state %s with %d members, want Stable with 1", dg.State, len(dg.Members))
	}
	ca, ok := dg.Members[0].Assigned.AsConsumer()
	if !ok {
		return fmt.Errorf("member assignment is not a consumer assignment")
	}
	n := 0
	for _, t := range ca.Topics {
		if t.Topic == topic {
			n += len(t.Partitions)
		}
	}
	if n != 2 {
		return fmt.Errorf("member assigned %d partitions of %s, want 2", n, topic)
	}
	return nil
}
