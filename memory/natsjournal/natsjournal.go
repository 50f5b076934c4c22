// Package natsjournal is the memory journal on NATS JetStream: a stream shared
// by many hosts, each of which keeps its own store (its journal file,
// snapshot, Bleve and HNSW indexes) as a replica of it (memory.Options.Journal).
//
// One stream message is one journal record: its body is the record without
// its sequence number ({"v":1,"ts":…,"kind":…,"session":…,"payload":…}), its
// stream sequence is the record's sequence, so the stream replayed from
// sequence 1 gives the same state hash as any host's journal file. Writers
// set Nats-Msg-Id: the stream drops a message whose id it has seen within its
// duplicate window (two minutes), which makes a retried write land once. The
// stream denies deletes and purges: a journal has no gaps.
//
// Open takes a URL as the memory.journal setting writes it:
//
//	nats://host:4222[,nats://other:4222][?stream=NAME&subject=SUBJ&replicas=3
//	    &promoter=true&creds=FILE&nkey=SEEDFILE&ca=FILE&cert=FILE&key=FILE&name=CLIENT]
//
// tls:// URLs (or ca/cert/key) use TLS; creds is a NATS credentials file (JWT
// and NKey seed), nkey an NKey seed file, as the NATS clients take them.
package natsjournal

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/exocortex/exocortex/memory"
	"github.com/exocortex/exocortex/staging"
)

// Defaults for a URL that does not name them.
const (
	DefaultStream  = "EXO_MEMORY"
	DefaultSubject = "exo.memory.journal"
	// requestTimeout bounds one request to the server (stream info, get).
	requestTimeout = 5 * time.Second
	// DefaultWriteTimeout is how long Append retries a write the server does
	// not acknowledge before it reports the journal unavailable.
	DefaultWriteTimeout = 10 * time.Second
)

// Config is a parsed memory.journal URL.
type Config struct {
	Servers  string // comma-separated server URLs, without the query
	Stream   string
	Subject  string
	Replicas int
	Creds    string // credentials file
	NKeySeed string // NKey seed file
	CAFile   string
	CertFile string
	KeyFile  string
	Name     string // client name shown by the server (default exocortex)
	// Promoted sends writes as proposals through the promoter (?promoter=true).
	Promoted bool
	// WriteTimeout bounds Append's retries (default DefaultWriteTimeout).
	WriteTimeout time.Duration
	// PromoteTimeout bounds the wait for a promoter's decision (default
	// DefaultPromoteTimeout).
	PromoteTimeout time.Duration
	Logger         *slog.Logger
}

// IsURL reports whether a memory.journal setting names a NATS server rather
// than a local directory.
func IsURL(s string) bool {
	return strings.HasPrefix(s, "nats://") || strings.HasPrefix(s, "tls://")
}

// ParseURL reads a memory.journal URL (see the package documentation).
func ParseURL(raw string) (Config, error) {
	c := Config{Stream: DefaultStream, Subject: DefaultSubject, Replicas: 1}
	if !IsURL(raw) {
		return c, fmt.Errorf("natsjournal: %q is not a nats:// or tls:// URL (e.g. nats://127.0.0.1:4222)", raw)
	}
	servers, query, _ := strings.Cut(raw, "?")
	for _, s := range strings.Split(servers, ",") {
		u, err := url.Parse(s)
		if err != nil || u.Host == "" {
			return c, fmt.Errorf("natsjournal: server %q in %q is not a URL like nats://host:4222", s, raw)
		}
	}
	c.Servers = servers
	q, err := url.ParseQuery(query)
	if err != nil {
		return c, fmt.Errorf("natsjournal: the options of %q: %w", raw, err)
	}
	for k, vs := range q {
		v := vs[len(vs)-1]
		switch k {
		case "stream":
			c.Stream = v
		case "subject":
			c.Subject = v
		case "replicas":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > 5 {
				return c, fmt.Errorf("natsjournal: replicas=%q in %q: give 1, 3 or 5", v, raw)
			}
			c.Replicas = n
		case "creds":
			c.Creds = v
		case "nkey":
			c.NKeySeed = v
		case "ca":
			c.CAFile = v
		case "cert":
			c.CertFile = v
		case "key":
			c.KeyFile = v
		case "name":
			c.Name = v
		case "promoter":
			b, err := strconv.ParseBool(v)
			if err != nil {
				return c, fmt.Errorf("natsjournal: promoter=%q in %q: give true or false", v, raw)
			}
			c.Promoted = b
		default:
			return c, fmt.Errorf("natsjournal: unknown option %q in %q (known: stream, subject, replicas, promoter, creds, nkey, ca, cert, key, name)", k, raw)
		}
	}
	if (c.CertFile == "") != (c.KeyFile == "") {
		return c, fmt.Errorf("natsjournal: %q gives cert without key or key without cert: give both", raw)
	}
	return c, nil
}

// Journal is a memory.Journal on a JetStream stream.
type Journal struct {
	cfg Config
	nc  *nats.Conn
	js  jetstream.JetStream
	log *slog.Logger

	mu       sync.Mutex
	stream   jetstream.Stream // nil until the stream is known to exist
	promoted bool             // the EVENTS and AUDIT streams exist
	audit    jetstream.Stream // the AUDIT stream, once looked up
}

var _ memory.Journal = (*Journal)(nil)

// Open connects to the servers of cfg. An unreachable server is not an
// error: the client keeps reconnecting, and every operation until then fails
// with memory.ErrJournalUnavailable.
func Open(ctx context.Context, cfg Config) (*Journal, error) {
	if cfg.Stream == "" {
		cfg.Stream = DefaultStream
	}
	if cfg.Subject == "" {
		cfg.Subject = DefaultSubject
	}
	if cfg.Replicas == 0 {
		cfg.Replicas = 1
	}
	if cfg.WriteTimeout <= 0 {
		cfg.WriteTimeout = DefaultWriteTimeout
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	nc, err := Dial(cfg)
	if err != nil {
		return nil, err
	}
	log := cfg.Logger
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("natsjournal: %w", err)
	}
	j := &Journal{cfg: cfg, nc: nc, js: js, log: log}
	if err := j.ensure(ctx); err != nil && !errors.Is(err, memory.ErrJournalUnavailable) {
		nc.Close()
		return nil, err
	}
	return j, nil
}

// Dial connects to the servers of cfg with its credentials, NKey and TLS
// files, reconnecting forever (an unreachable server is not an error). The
// session store (package natssession) connects with it too.
func Dial(cfg Config) (*nats.Conn, error) {
	name := cfg.Name
	if name == "" {
		name = "exocortex"
	}
	opts := []nats.Option{
		nats.Name(name),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(250 * time.Millisecond),
		nats.RetryOnFailedConnect(true),
		nats.Timeout(requestTimeout),
	}
	if cfg.Creds != "" {
		opts = append(opts, nats.UserCredentials(cfg.Creds))
	}
	if cfg.NKeySeed != "" {
		o, err := nats.NkeyOptionFromSeed(cfg.NKeySeed)
		if err != nil {
			return nil, fmt.Errorf("natsjournal: the NKey seed file %s: %w", cfg.NKeySeed, err)
		}
		opts = append(opts, o)
	}
	if cfg.CAFile != "" {
		opts = append(opts, nats.RootCAs(cfg.CAFile))
	}
	if cfg.CertFile != "" {
		opts = append(opts, nats.ClientCert(cfg.CertFile, cfg.KeyFile))
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	opts = append(opts,
		nats.DisconnectErrHandler(func(nc *nats.Conn, err error) {
			if nc.IsClosed() {
				return // Close: not news
			}
			log.Warn("memory journal: disconnected from NATS", "servers", cfg.Servers, "err", err)
		}),
		nats.ReconnectHandler(func(nc *nats.Conn) {
			log.Info("memory journal: reconnected to NATS", "server", nc.ConnectedUrlRedacted())
		}))
	nc, err := nats.Connect(cfg.Servers, opts...)
	if err != nil {
		return nil, fmt.Errorf("natsjournal: connecting to %s: %w", cfg.Servers, err)
	}
	return nc, nil
}

// OpenURL is ParseURL then Open.
func OpenURL(ctx context.Context, raw string, log *slog.Logger) (*Journal, error) {
	cfg, err := ParseURL(raw)
	if err != nil {
		return nil, err
	}
	cfg.Logger = log
	return Open(ctx, cfg)
}

// StreamConfig is the stream a journal creates when it does not exist.
func (c Config) StreamConfig() jetstream.StreamConfig {
	return jetstream.StreamConfig{
		Name:        c.Stream,
		Description: "Exocortex memory journal: one message per record, sequence = record sequence",
		Subjects:    []string{c.Subject},
		Storage:     jetstream.FileStorage,
		Replicas:    c.Replicas,
		Retention:   jetstream.LimitsPolicy,
		Discard:     jetstream.DiscardNew,
		Duplicates:  2 * time.Minute,
		DenyDelete:  true,
		DenyPurge:   true,
		AllowDirect: true,
	}
}

// ensure finds or creates the stream.
func (j *Journal) ensure(ctx context.Context) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.stream != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	st, err := j.js.Stream(ctx, j.cfg.Stream)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		st, err = j.js.CreateStream(ctx, j.cfg.StreamConfig())
		if errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			st, err = j.js.Stream(ctx, j.cfg.Stream)
		}
	}
	if err != nil {
		return j.unavailable("finding the stream", err)
	}
	if subs := st.CachedInfo().Config.Subjects; len(subs) == 0 || !slicesContain(subs, j.cfg.Subject) {
		return fmt.Errorf("natsjournal: stream %s on %s takes subjects %v, not %s: name another stream (?stream=) or subject (?subject=)", j.cfg.Stream, j.cfg.Servers, subs, j.cfg.Subject)
	}
	j.stream = st
	return nil
}

func slicesContain(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// unavailable wraps a failure to reach the server.
func (j *Journal) unavailable(what string, err error) error {
	return fmt.Errorf("%w: %s: %s: %w", memory.ErrJournalUnavailable, j.Location(), what, err)
}

// Location is the servers and the stream.
func (j *Journal) Location() string {
	return redact(j.cfg.Servers) + " stream " + j.cfg.Stream
}

// redact drops user:password from server URLs.
func redact(servers string) string {
	var out []string
	for _, s := range strings.Split(servers, ",") {
		if u, err := url.Parse(s); err == nil && u.User != nil {
			u.User = nil
			s = u.String()
		}
		out = append(out, s)
	}
	return strings.Join(out, ",")
}

// Conn is the client connection (tests stop and start servers under it).
func (j *Journal) Conn() *nats.Conn { return j.nc }

// JetStream is the JetStream context, for the promoter's streams and the
// benchmarks.
func (j *Journal) JetStream() jetstream.JetStream { return j.js }

// Config is the journal's configuration.
func (j *Journal) Config() Config { return j.cfg }

// Close closes the connection.
func (j *Journal) Close() error {
	j.nc.Close()
	return nil
}

// wire is a record as a stream message's body: its sequence is the message's.
type wire struct {
	V       int             `json:"v"`
	TS      time.Time       `json:"ts"`
	Kind    string          `json:"kind"`
	Session string          `json:"session,omitempty"`
	Payload json.RawMessage `json:"payload"`
}

// Encode is the body of a stream message for e stamped ts: the bytes
// json.Marshal gives for its wire form, written directly (marshalling the
// struct validated and compacted the payload a second time, a tenth of the
// promoter's work per delta).
func Encode(e staging.Entry, ts time.Time) ([]byte, json.RawMessage, error) {
	p, err := staging.EncodePayload(e.Payload)
	if err != nil {
		return nil, nil, fmt.Errorf("natsjournal: encoding a %s payload: %w", e.Kind, err)
	}
	b := make([]byte, 0, len(p)+96+len(e.Kind)+len(e.Session))
	b = append(b, `{"v":`...)
	b = strconv.AppendInt(b, staging.SchemaVersion, 10)
	b = append(b, `,"ts":`...)
	tb, err := ts.UTC().MarshalJSON()
	if err != nil {
		return nil, nil, fmt.Errorf("natsjournal: the time of a %s record: %w", e.Kind, err)
	}
	b = append(b, tb...)
	b = append(b, `,"kind":`...)
	b = appendString(b, e.Kind)
	if e.Session != "" {
		b = append(b, `,"session":`...)
		b = appendString(b, e.Session)
	}
	b = append(b, `,"payload":`...)
	var esc bytes.Buffer
	json.HTMLEscape(&esc, p) // as json.Marshal writes a RawMessage
	b = append(b, esc.Bytes()...)
	b = append(b, '}')
	return b, p, nil
}

// appendString appends s as json.Marshal writes a string.
func appendString(b []byte, s string) []byte {
	q, _ := json.Marshal(s) // a string always marshals (bad UTF-8 becomes U+FFFD)
	return append(b, q...)
}

// Decode reads a stream message's body as the record with sequence seq.
func Decode(seq uint64, data []byte) (staging.Record, error) {
	var w wire
	if err := json.Unmarshal(data, &w); err != nil {
		return staging.Record{}, fmt.Errorf("natsjournal: stream message %d is not a journal record: %w", seq, err)
	}
	if w.V > staging.SchemaVersion {
		return staging.Record{}, fmt.Errorf("natsjournal: stream message %d: %w (v=%d)", seq, staging.ErrNewerVersion, w.V)
	}
	if w.Kind == "" {
		return staging.Record{}, fmt.Errorf("natsjournal: stream message %d has no kind", seq)
	}
	return staging.Record{V: w.V, Seq: seq, TS: w.TS, Kind: w.Kind, Session: w.Session, Payload: w.Payload}, nil
}

// offlineWait is how long a write waits for a lost connection to come back
// before it is refused.
const offlineWait = 2 * time.Second

// connected waits up to offlineWait for the connection, and says why not.
func (j *Journal) connected(ctx context.Context) error {
	deadline := time.Now().Add(min(offlineWait, j.cfg.WriteTimeout))
	for !j.nc.IsConnected() {
		if j.nc.IsClosed() {
			return j.unavailable("writing", nats.ErrConnectionClosed)
		}
		if time.Now().After(deadline) {
			return j.unavailable("writing", fmt.Errorf("not connected to any of %s (status %s); reconnecting in the background", redact(j.cfg.Servers), j.nc.Status()))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	return nil
}

// Redact is servers without user:password, for messages and listings.
func Redact(servers string) string { return redact(servers) }
