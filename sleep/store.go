package sleep

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/exocortex/exocortex/memory"
	"github.com/exocortex/exocortex/memory/service"
	"github.com/exocortex/exocortex/staging"
)

// memStore is what a run reads and writes. A run goes through the home's
// memory service (serviceStore): a client of the owner while a session runs,
// the owner itself for the run's length otherwise. A dry run plans on an
// overlay of it (dryStore), so the store is neither written, copied nor
// replayed.
type memStore interface {
	Records(ctx context.Context) ([]*memory.Record, error)
	Append(ctx context.Context, entries []staging.Entry) ([]staging.Record, error)
	// Vectors returns the index's vectors of ids (the absent left out).
	Vectors(ctx context.Context, ids []string) (map[string][]float32, error)
	Seq(ctx context.Context) (uint64, error)
	Hash(ctx context.Context) (string, error)
	Notices(ctx context.Context) []string
}

// serviceStore is the store through its memory service.
type serviceStore struct {
	r service.Remote
}

func (s serviceStore) Records(ctx context.Context) ([]*memory.Record, error) { return s.r.Records(ctx) }

func (s serviceStore) Append(ctx context.Context, entries []staging.Entry) ([]staging.Record, error) {
	return s.r.Append(ctx, entries)
}

func (s serviceStore) Vectors(ctx context.Context, ids []string) (map[string][]float32, error) {
	return s.r.Vectors(ctx, ids)
}

func (s serviceStore) Seq(ctx context.Context) (uint64, error) {
	st, err := s.r.Stats(ctx)
	return st.JournalSeq, err
}

func (s serviceStore) Hash(ctx context.Context) (string, error) {
	st, err := s.r.Stats(ctx)
	return st.StateHash, err
}

func (s serviceStore) Notices(ctx context.Context) []string {
	st, _ := s.r.Stats(ctx)
	return st.Notices
}

// dryStore plans on a private overlay of the store's records: what a phase
// would write is applied to the overlay, so the next phase plans on the state
// the earlier ones would leave, as a real run's phases do.
type dryStore struct {
	base memStore // nil: there is no store yet
	ov   *memory.Overlay
	now  func() time.Time
}

func newDryStore(ctx context.Context, base memStore, now func() time.Time) (*dryStore, error) {
	d := &dryStore{base: base, now: now}
	if base == nil {
		d.ov = memory.NewOverlay(nil, 0)
		return d, nil
	}
	seq, err := base.Seq(ctx)
	if err != nil {
		return nil, err
	}
	recs, err := base.Records(ctx)
	if err != nil {
		return nil, err
	}
	d.ov = memory.NewOverlay(recs, seq)
	return d, nil
}

func (d *dryStore) Records(ctx context.Context) ([]*memory.Record, error) { return d.ov.Records(), nil }

func (d *dryStore) Append(ctx context.Context, entries []staging.Entry) ([]staging.Record, error) {
	return d.ov.Append(entries, d.now())
}

func (d *dryStore) Vectors(ctx context.Context, ids []string) (map[string][]float32, error) {
	if d.base == nil {
		return nil, nil
	}
	return d.base.Vectors(ctx, ids)
}

func (d *dryStore) Seq(ctx context.Context) (uint64, error) { return d.ov.Seq(), nil }

func (d *dryStore) Hash(ctx context.Context) (string, error) { return d.ov.Hash(), nil }

func (d *dryStore) Notices(ctx context.Context) []string {
	if d.base == nil {
		return nil
	}
	return d.base.Notices(ctx)
}

// remoteEmbedder embeds through the owner's embedder, so a run that is a
// client computes the vectors the owner's index holds.
type remoteEmbedder struct {
	r     service.Remote
	model string
	dims  int
}

func (e *remoteEmbedder) ModelID() string { return e.model }
func (e *remoteEmbedder) Dimensions() int { return e.dims }

func (e *remoteEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	model, vecs, err := e.r.Embed(ctx, texts)
	if err != nil {
		return nil, err
	}
	if model == "" {
		return nil, errors.New("the memory service has no embedder")
	}
	if len(vecs) > 0 && len(vecs[0]) > 0 {
		e.dims = len(vecs[0])
	}
	return vecs, nil
}

// connectStore reaches the store's memory service; with no owner this
// process becomes it (opening the store with opts) until Close.
func connectStore(ctx context.Context, dir string, opts memory.Options, wait time.Duration) (*service.Client, error) {
	c, err := service.Connect(ctx, service.Config{Dir: dir, Options: opts, Wait: wait, Logger: opts.Logger})
	if err != nil {
		var le *staging.LockedError
		if errors.As(err, &le) {
			return nil, &BusyError{Dir: dir, Holder: err}
		}
		return nil, fmt.Errorf("sleep: reaching the memory store %s: %w", dir, err)
	}
	return c, nil
}

// embedderOf is the embedder a run's vectors come from: the owner's (nil
// when it has none: the run then uses lexical vectors).
func embedderOf(ctx context.Context, r service.Remote) (memory.Embedder, error) {
	st, err := r.Stats(ctx)
	if err != nil {
		return nil, err
	}
	if st.VectorModel == "" {
		return nil, nil
	}
	return &remoteEmbedder{r: r, model: st.VectorModel}, nil
}
