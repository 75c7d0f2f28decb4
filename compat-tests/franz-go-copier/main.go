// The read-process-write loop of compat-tests/exactly_once_kill_test.py in
// franz-go, through kgo's GroupTransactSession (franz-go's exactly-once
// consume-transform-produce: it aborts and rewinds to the group's committed
// offsets itself when a rebalance or an error makes a commit unsafe).
//
//	franz-go-copier BOOTSTRAP INPUT OUTPUT GROUP
//
// Consumes INPUT as static member copier-1 of GROUP (read_committed); per
// poll (at most 25 records) begins a transaction, writes key=value,
// value="out-"+value to OUTPUT's partition of the same number and ends it,
// the group's offsets committed in it. An error the session cannot recover
// from exits 3, as an application should. SIGTERM closes it cleanly.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

func main() {
	if len(os.Args) != 5 {
		fmt.Fprintln(os.Stderr, "usage: franz-go-copier BOOTSTRAP INPUT OUTPUT GROUP")
		os.Exit(2)
	}
	bootstrap, input, output, group := os.Args[1], os.Args[2], os.Args[3], os.Args[4]
	sess, err := kgo.NewGroupTransactSession(
		kgo.SeedBrokers(bootstrap),
		kgo.TransactionalID("eos-copier"),
		kgo.TransactionTimeout(10*time.Second),
		kgo.ProducerLinger(5*time.Millisecond),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), // Record.Partition
		kgo.ConsumerGroup(group),
		kgo.InstanceID("copier-1"),
		kgo.SessionTimeout(6*time.Second),
		kgo.ConsumeTopics(input),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.RequireStableFetchOffsets(),
	)
	if err != nil {
		fmt.Fprintln(os.Stderr, "copier:", err)
		os.Exit(3)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	rc := run(ctx, sess, output)
	sess.Close()
	os.Exit(rc)
}

func run(ctx context.Context, sess *kgo.GroupTransactSession, output string) int {
	for ctx.Err() == nil {
		fs := sess.PollRecords(ctx, 25)
		if fs.IsClientClosed() || ctx.Err() != nil {
			return 0
		}
		fs.EachError(func(t string, p int32, err error) {
			fmt.Fprintf(os.Stderr, "copier: fetch %s/%d: %v\n", t, p, err)
		})
		recs := fs.Records()
		if len(recs) == 0 {
			continue
		}
		if err := sess.Begin(); err != nil {
			fmt.Fprintln(os.Stderr, "copier: begin:", err)
			return 3
		}
		// A produce that fails aborts the records still buffered; Err waits
		// for every promise, so the end is decided on all of them.
		promise := kgo.AbortingFirstErrPromise(sess.Client())
		for _, r := range recs {
			sess.Produce(ctx, &kgo.Record{Topic: output, Partition: r.Partition, Key: r.Value,
				Value: append([]byte("out-"), r.Value...)}, promise.Promise())
		}
		produceErr := promise.Err()
		committed, err := sess.End(context.Background(), kgo.TransactionEndTry(produceErr == nil))
		if err != nil {
			fmt.Fprintln(os.Stderr, "copier: end:", err)
			return 3
		}
		if !committed {
			fmt.Fprintln(os.Stderr, "copier: aborted, rewound (produce:", produceErr, ")")
		}
	}
	return 0
}
