// The security columns (run_matrix.py --security): with --security FILE the
// driver runs only these, each over the one listener FILE names for it
// (keys: compat-tests/matrix/security_columns.py), with franz-go's own TLS
// (kgo.DialTLSConfig, crypto/tls) and SASL (pkg/sasl/plain, pkg/sasl/scram).
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// column is one entry of the --security file.
type column struct {
	Bootstrap        string `json:"bootstrap"`
	Listener         string `json:"listener"`
	SecurityProtocol string `json:"security_protocol"`
	CaPem            string `json:"ca_pem"`
	ClientCertPem    string `json:"client_cert_pem"`
	ClientKeyPem     string `json:"client_key_pem"`
	SaslMechanism    string `json:"sasl_mechanism"`
	SaslUsername     string `json:"sasl_username"`
	SaslPassword     string `json:"sasl_password"`
}

const securityRecords = 20 // per partition

// securityScenarios reads the --security file: one scenario per column
// (by id: Go's JSON objects are unordered, and the harness needs no order).
func securityScenarios(path string) ([]scenario, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var cols map[string]column
	if err := json.Unmarshal(raw, &cols); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var ids []string
	for id := range cols {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var out []scenario
	for _, id := range ids {
		c := cols[id]
		out = append(out, scenario{id, 45 * time.Second, func(ctx context.Context, e *env) error {
			return securityRoundTrip(ctx, e, id, c)
		}})
	}
	return out, nil
}

// clientOpts: the column's bootstrap address, TLS and SASL as franz-go takes them.
func (c column) clientOpts() ([]kgo.Opt, error) {
	opts := []kgo.Opt{kgo.SeedBrokers(c.Bootstrap)}
	if strings.HasSuffix(c.SecurityProtocol, "SSL") {
		pem, err := os.ReadFile(c.CaPem)
		if err != nil {
			return nil, err
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("no certificate in %s", c.CaPem)
		}
		// kgo sets ServerName to each broker's host (127.0.0.1): the
		// broker's certificate is checked against its IP address.
		cfg := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
		if c.ClientCertPem != "" {
			pair, err := tls.LoadX509KeyPair(c.ClientCertPem, c.ClientKeyPem)
			if err != nil {
				return nil, err
			}
			cfg.Certificates = []tls.Certificate{pair}
		}
		opts = append(opts, kgo.DialTLSConfig(cfg))
	}
	switch c.SaslMechanism {
	case "":
	case "PLAIN":
		opts = append(opts, kgo.SASL(plain.Auth{User: c.SaslUsername, Pass: c.SaslPassword}.AsMechanism()))
	case "SCRAM-SHA-256":
		opts = append(opts, kgo.SASL(scram.Auth{User: c.SaslUsername, Pass: c.SaslPassword}.AsSha256Mechanism()))
	case "SCRAM-SHA-512":
		opts = append(opts, kgo.SASL(scram.Auth{User: c.SaslUsername, Pass: c.SaslPassword}.AsSha512Mechanism()))
	default:
		return nil, errUnsupported{"franz-go has no SASL mechanism " + c.SaslMechanism}
	}
	return opts, nil
}

// securityRoundTrip, over the column's listener only: kadm creates a topic
// (2 partitions) and metadata shows it, every broker advertised on this
// listener; acks=all produce to both partitions; a group member consumes
// every record exactly and commits; kadm lists the group and fetches its
// committed offsets.
func securityRoundTrip(ctx context.Context, e *env, id string, c column) error {
	opts, err := c.clientOpts()
	if err != nil {
		return err
	}
	admCl, err := kgo.NewClient(opts...)
	if err != nil {
		return err
	}
	defer admCl.Close()
	se := &env{bootstrap: c.Bootstrap, seeds: []string{c.Bootstrap}, brokers: e.brokers, prefix: e.prefix,
		adm: kadm.NewClient(admCl)}
	topic, group := se.name(strings.ReplaceAll(id, "_", "-")), se.name(strings.ReplaceAll(id, "_", "-")+"-group")
	if err := createTopic(ctx, se, topic, 2); err != nil {
		return err
	}
	md, err := se.adm.Metadata(ctx, topic)
	if err != nil {
		return err
	}
	_, port, _ := strings.Cut(c.Bootstrap, ":")
	for _, b := range md.Brokers {
		if strconv.Itoa(int(b.Port)) != port {
			return fmt.Errorf("broker %d advertised on port %d, not the column's %s", b.NodeID, b.Port, port)
		}
	}

	prodCl, err := kgo.NewClient(append(opts, kgo.DefaultProduceTopic(topic), kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))...)
	if err != nil {
		return err
	}
	defer prodCl.Close()
	want := map[int32][]string{}
	var recs []*kgo.Record
	for p := int32(0); p < 2; p++ {
		want[p] = values(fmt.Sprintf("%s-p%d", id, p), securityRecords)
		for _, v := range want[p] {
			recs = append(recs, &kgo.Record{Value: []byte(v), Partition: p})
		}
	}
	if err := prodCl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		return fmt.Errorf("produce: %w", err)
	}

	consCl, err := kgo.NewClient(append(opts, kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit())...)
	if err != nil {
		return err
	}
	defer consCl.Close()
	got, err := pollN(ctx, consCl, 2*securityRecords)
	if err != nil {
		return err
	}
	byPart := map[int32][]*kgo.Record{}
	for _, r := range got {
		byPart[r.Partition] = append(byPart[r.Partition], r)
	}
	for p, vals := range want {
		if err := checkValues(byPart[p], vals, 0); err != nil {
			return fmt.Errorf("partition %d: %w", p, err)
		}
	}
	if err := consCl.CommitUncommittedOffsets(ctx); err != nil {
		return fmt.Errorf("commit: %w", err)
	}

	groups, err := se.adm.ListGroups(ctx)
	if err != nil {
		return fmt.Errorf("list groups: %w", err)
	}
	if _, ok := groups[group]; !ok {
		return fmt.Errorf("group %s not listed: %v", group, groups.Groups())
	}
	offsets, err := se.adm.FetchOffsets(ctx, group)
	if err != nil {
		return fmt.Errorf("fetch offsets: %w", err)
	}
	var committed []string
	for p := int32(0); p < 2; p++ {
		o, ok := offsets.Lookup(topic, p)
		if !ok || o.Err != nil || o.At != securityRecords {
			return fmt.Errorf("committed offset of partition %d: %+v (found %v), want %d", p, o, ok, securityRecords)
		}
		committed = append(committed, strconv.FormatInt(o.At, 10))
	}
	sort.Strings(committed)
	return okDetail{fmt.Sprintf("%s: %d records over %s, committed %s, group listed", c.Listener, 2*securityRecords,
		c.SecurityProtocol, strings.Join(committed, "+"))}
}
