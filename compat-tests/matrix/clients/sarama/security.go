// The security columns (run_matrix.py --security): with --security FILE the
// driver runs only these, each over the one listener FILE names for it
// (keys: compat-tests/matrix/security_columns.py), with Sarama's
// Config.Net.TLS (crypto/tls) and Config.Net.SASL. Sarama speaks PLAIN
// itself; for SCRAM it takes the application's client
// (SCRAMClientGeneratorFunc), which scramClient below is (RFC 5802 over Go's
// crypto/hmac, crypto/sha256, crypto/sha512 and crypto/pbkdf2).
package main

import (
	"context"
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/subtle"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"hash"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/IBM/sarama"
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

// secure, while a security scenario runs, adds its column's TLS and SASL to
// every config newConfig makes (scenarios run one at a time).
var secure func(*sarama.Config)

const securityRecords = 20 // per partition

// securityScenarios reads the --security file: one scenario per column, by
// id (Go's JSON objects are unordered, and the harness needs no order).
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

// configure returns what the column adds to a Sarama config.
func (c column) configure() (func(*sarama.Config), error) {
	var tlsConfig *tls.Config
	if strings.HasSuffix(c.SecurityProtocol, "SSL") {
		pem, err := os.ReadFile(c.CaPem)
		if err != nil {
			return nil, err
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("no certificate in %s", c.CaPem)
		}
		// No ServerName: crypto/tls takes the dialled host (127.0.0.1) and
		// checks the broker's certificate against it.
		tlsConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
		if c.ClientCertPem != "" {
			pair, err := tls.LoadX509KeyPair(c.ClientCertPem, c.ClientKeyPem)
			if err != nil {
				return nil, err
			}
			tlsConfig.Certificates = []tls.Certificate{pair}
		}
	}
	var mechanism sarama.SASLMechanism
	var newHash func() hash.Hash
	switch c.SaslMechanism {
	case "":
	case "PLAIN":
		mechanism = sarama.SASLTypePlaintext
	case "SCRAM-SHA-256":
		mechanism, newHash = sarama.SASLTypeSCRAMSHA256, sha256.New
	case "SCRAM-SHA-512":
		mechanism, newHash = sarama.SASLTypeSCRAMSHA512, sha512.New
	default:
		return nil, errUnsupported{"Sarama has no SASL mechanism " + c.SaslMechanism}
	}
	return func(cfg *sarama.Config) {
		if tlsConfig != nil {
			cfg.Net.TLS.Enable = true
			cfg.Net.TLS.Config = tlsConfig.Clone()
		}
		if mechanism != "" {
			cfg.Net.SASL.Enable = true
			cfg.Net.SASL.Handshake = true
			cfg.Net.SASL.Version = sarama.SASLHandshakeV1
			cfg.Net.SASL.Mechanism = mechanism
			cfg.Net.SASL.User = c.SaslUsername
			cfg.Net.SASL.Password = c.SaslPassword
			if newHash != nil {
				cfg.Net.SASL.SCRAMClientGeneratorFunc = func() sarama.SCRAMClient { return &scramClient{newHash: newHash} }
			}
		}
	}, nil
}

// securityRoundTrip, over the column's listener only: the cluster admin
// creates a topic (2 partitions) and metadata shows it, every broker
// advertised on this listener; acks=all produce to both partitions; a group
// member consumes every record exactly once and commits; the admin lists
// the group and reads its committed offsets back.
func securityRoundTrip(ctx context.Context, e *env, id string, c column) error {
	apply, err := c.configure()
	if err != nil {
		return err
	}
	secure = apply
	defer func() { secure = nil }()
	se := &env{bootstrap: c.Bootstrap, seeds: []string{c.Bootstrap}, brokers: e.brokers, prefix: e.prefix}
	se.at("connecting")
	if se.client, err = sarama.NewClient(se.seeds, newConfig()); err != nil {
		return fmt.Errorf("client: %w", err)
	}
	if se.admin, err = sarama.NewClusterAdminFromClient(se.client); err != nil {
		se.client.Close()
		return fmt.Errorf("cluster admin: %w", err)
	}
	defer se.admin.Close()
	topic, group := se.name(strings.ReplaceAll(id, "_", "-")), se.name(strings.ReplaceAll(id, "_", "-")+"-group")
	if err := createTopic(ctx, se, topic, 2); err != nil {
		return err
	}
	_, port, _ := strings.Cut(c.Bootstrap, ":")
	for _, b := range se.client.Brokers() {
		if _, p, _ := strings.Cut(b.Addr(), ":"); p != port {
			return fmt.Errorf("broker %d advertised at %s, not on the column's port %s", b.ID(), b.Addr(), port)
		}
	}
	vals, err := produceSpread(se, topic, 2, securityRecords, id)
	if err != nil {
		return err
	}
	m, err := startMember(ctx, se, group, topic)
	if err != nil {
		return err
	}
	defer m.close()
	if err := waitSeen(ctx, []*member{m}, vals); err != nil {
		return err
	}
	// Every partition's committed offset reaches its end.
	se.at("reading the committed offsets")
	var offs map[int32]int64
	for {
		offs, err = committed(se, group, topic, 2)
		if err == nil && offs[0] == securityRecords && offs[1] == securityRecords {
			break
		}
		if serr := sleep(ctx, 100*time.Millisecond); serr != nil {
			return fmt.Errorf("committed offsets %v (err %v), want %d on both partitions", offs, err, securityRecords)
		}
	}
	_, seen, _ := m.snapshot()
	if len(seen) != len(vals) {
		return fmt.Errorf("the member consumed %d records, want %d (each once)", len(seen), len(vals))
	}
	groups, err := se.admin.ListConsumerGroups()
	if err != nil {
		return fmt.Errorf("list groups: %w", err)
	}
	if _, ok := groups[group]; !ok {
		return fmt.Errorf("group %s not listed", group)
	}
	return okDetail{fmt.Sprintf("%s: %d records over %s, committed %s+%s, group listed", c.Listener, len(vals),
		c.SecurityProtocol, strconv.FormatInt(offs[0], 10), strconv.FormatInt(offs[1], 10))}
}

// scramClient is RFC 5802's client side for Sarama (no channel binding).
type scramClient struct {
	newHash         func() hash.Hash
	user, password  string
	clientNonce     string
	clientFirstBare string
	serverSignature []byte
	step            int
	done            bool
}

func (s *scramClient) Begin(user, password, authzID string) error {
	if authzID != "" {
		return fmt.Errorf("scram: no authorization id support")
	}
	nonce := make([]byte, 24)
	if _, err := rand.Read(nonce); err != nil {
		return err
	}
	s.user, s.password, s.clientNonce = user, password, base64.RawStdEncoding.EncodeToString(nonce)
	s.step, s.done = 0, false
	return nil
}

func (s *scramClient) Done() bool { return s.done }

func (s *scramClient) hmac(key []byte, msg string) []byte {
	h := hmac.New(s.newHash, key)
	h.Write([]byte(msg))
	return h.Sum(nil)
}

func (s *scramClient) Step(challenge string) (string, error) {
	s.step++
	switch s.step {
	case 1: // client-first-message
		name := strings.NewReplacer("=", "=3D", ",", "=2C").Replace(s.user)
		s.clientFirstBare = "n=" + name + ",r=" + s.clientNonce
		return "n,," + s.clientFirstBare, nil
	case 2: // server-first-message -> client-final-message
		attrs := map[string]string{}
		for _, kv := range strings.Split(challenge, ",") {
			if k, v, ok := strings.Cut(kv, "="); ok {
				attrs[k] = v
			}
		}
		nonce := attrs["r"]
		if !strings.HasPrefix(nonce, s.clientNonce) || len(nonce) == len(s.clientNonce) {
			return "", fmt.Errorf("scram: server nonce %q does not extend ours", nonce)
		}
		salt, err := base64.StdEncoding.DecodeString(attrs["s"])
		if err != nil {
			return "", fmt.Errorf("scram: salt: %w", err)
		}
		iterations, err := strconv.Atoi(attrs["i"])
		if err != nil || iterations < 1 {
			return "", fmt.Errorf("scram: iteration count %q", attrs["i"])
		}
		salted, err := pbkdf2.Key(s.newHash, s.password, salt, iterations, s.newHash().Size())
		if err != nil {
			return "", err
		}
		clientKey := s.hmac(salted, "Client Key")
		h := s.newHash()
		h.Write(clientKey)
		storedKey := h.Sum(nil)
		withoutProof := "c=" + base64.StdEncoding.EncodeToString([]byte("n,,")) + ",r=" + nonce
		authMessage := s.clientFirstBare + "," + challenge + "," + withoutProof
		proof := s.hmac(storedKey, authMessage)
		for i := range proof {
			proof[i] ^= clientKey[i]
		}
		s.serverSignature = s.hmac(s.hmac(salted, "Server Key"), authMessage)
		return withoutProof + ",p=" + base64.StdEncoding.EncodeToString(proof), nil
	case 3: // server-final-message
		if e, ok := strings.CutPrefix(challenge, "e="); ok {
			return "", fmt.Errorf("scram: server error %s", e)
		}
		v, ok := strings.CutPrefix(challenge, "v=")
		got, err := base64.StdEncoding.DecodeString(v)
		if !ok || err != nil || subtle.ConstantTimeCompare(got, s.serverSignature) != 1 {
			return "", fmt.Errorf("scram: the server's signature does not verify: %q", challenge)
		}
		s.done = true
		return "", nil
	}
	return "", fmt.Errorf("scram: unexpected step %d", s.step)
}
