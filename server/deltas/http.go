package deltas

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/server/route"
)

func httpFunc(f http.HandlerFunc) http.Handler { return f }

// MaxLimit bounds the deltas one GET /api/v1/deltas answers.
const MaxLimit = 10000

// SinceReply is the answer of GET /api/v1/deltas.
type SinceReply struct {
	Deltas []Delta `json:"deltas"`
	// Next is the seq to ask since next time (the last one answered, or since).
	Next uint64 `json:"next"`
	// More says the limit cut the answer: ask again since Next.
	More bool `json:"more"`
}

func badField(w http.ResponseWriter, field, msg string) {
	route.Error(w, http.StatusBadRequest, route.Problem{Code: route.CodeInvalidField, Field: field, Message: msg})
}

func (s *Service) since(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	since, err := strconv.ParseUint(q.Get("since"), 10, 64)
	if err != nil {
		badField(w, "since", fmt.Sprintf("since is %q: give the last sequence number you have, a whole number (0 for everything)", q.Get("since")))
		return
	}
	limit := 1000
	if l := q.Get("limit"); l != "" {
		if limit, err = strconv.Atoi(l); err != nil || limit < 1 || limit > MaxLimit {
			badField(w, "limit", fmt.Sprintf("limit is %q: give a whole number from 1 to %d", l, MaxLimit))
			return
		}
	}
	out := SinceReply{Deltas: []Delta{}, Next: since}
	err = s.read(r.Context(), since, false, func(b batch) error {
		if len(out.Deltas) >= limit {
			out.More = true
			return errStop
		}
		out.Deltas = append(out.Deltas, b.deltas...)
		out.Next = b.seq
		return nil
	})
	if err != nil {
		route.Error(w, http.StatusServiceUnavailable, route.Problem{Code: route.CodeUnavailable, Message: "reading the journal: " + err.Error()})
		return
	}
	route.JSON(w, http.StatusOK, out)
}

// Catchup is the data of the stream's "catchup" event.
type Catchup struct {
	// Since is the seq of the last delta this stream sent: fetch
	// GET /api/v1/deltas?since=Since, then reconnect.
	Since  uint64 `json:"since"`
	Reason string `json:"reason"`
}

// position is where a stream is: every delta of journal events up to seq,
// and the first skip deltas of event seq+1 when skip > 0 (a "seq.i" id).
type position struct {
	seq  uint64
	skip int
}

// parsePosition reads a Last-Event-ID: "42" (all of 42) or "42.1" (the
// deltas 0 and 1 of event 42).
func parsePosition(id string) (position, error) {
	head, idx, partial := strings.Cut(id, ".")
	seq, err := strconv.ParseUint(head, 10, 64)
	if err != nil {
		return position{}, err
	}
	if !partial {
		return position{seq: seq}, nil
	}
	i, err := strconv.Atoi(idx)
	if err != nil || i < 0 || seq == 0 {
		return position{}, fmt.Errorf("bad index %q", idx)
	}
	return position{seq: seq - 1, skip: i + 1}, nil
}

// sse writes deltas as server-sent events and keeps the stream's position.
type sse struct {
	w   http.ResponseWriter
	rc  *http.ResponseController
	pos position
}

func (e *sse) send(b batch) error {
	if b.seq <= e.pos.seq {
		return nil // replayed already
	}
	skip := 0
	if b.seq == e.pos.seq+1 {
		skip = e.pos.skip
	}
	for i := skip; i < len(b.deltas); i++ {
		id := strconv.FormatUint(b.seq, 10)
		if i < len(b.deltas)-1 {
			id += "." + strconv.Itoa(i)
		}
		data, _ := json.Marshal(b.deltas[i])
		if _, err := fmt.Fprintf(e.w, "id: %s\nevent: delta\ndata: %s\n\n", id, data); err != nil {
			return err
		}
	}
	e.pos = position{seq: b.seq}
	return e.rc.Flush()
}

func (e *sse) comment(text string) error {
	if _, err := fmt.Fprintf(e.w, ": %s\n\n", text); err != nil {
		return err
	}
	return e.rc.Flush()
}

func (s *Service) stream(w http.ResponseWriter, r *http.Request) {
	from := r.Header.Get("Last-Event-ID")
	field := "Last-Event-ID"
	if from == "" {
		from, field = r.URL.Query().Get("since"), "since"
	}
	var pos position
	if from != "" {
		p, err := parsePosition(from)
		if err != nil {
			badField(w, field, fmt.Sprintf("%s is %q: give the id of the last event you got (a sequence number)", field, from))
			return
		}
		pos = p
	} else {
		// From now on: the journal's end before subscribing, so that what is
		// written meanwhile is replayed below or comes from the hub.
		st, err := s.mem.Stats(r.Context(), &exocortexv1.MemoryStatsRequest{})
		if err != nil {
			route.Error(w, http.StatusServiceUnavailable, route.Problem{Code: route.CodeUnavailable, Message: "the memory service: " + err.Error()})
			return
		}
		pos = position{seq: st.GetJournalSeq()}
	}
	u, ok := s.hub.subscribe()
	if !ok {
		route.Error(w, http.StatusServiceUnavailable, route.Problem{Code: route.CodeUnavailable, Message: "the server is shutting down"})
		return
	}
	defer s.hub.unsubscribe(u)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	e := &sse{w: w, rc: http.NewResponseController(w), pos: pos}
	if err := e.comment("deltas"); err != nil {
		return
	}
	// Replay what the hub may not have: from pos to the journal's end; the
	// hub's events that overlap it are skipped by seq.
	if err := s.read(r.Context(), pos.seq, false, e.send); err != nil {
		return
	}
	tick := time.NewTicker(s.opts.KeepAlive)
	defer tick.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-tick.C:
			if e.comment("keep-alive") != nil {
				return
			}
		case b, ok := <-u.ch:
			if !ok {
				if u.behind {
					data, _ := json.Marshal(Catchup{Since: e.pos.seq, Reason: "this stream fell behind the journal; fetch GET /api/v1/deltas?since=" +
						strconv.FormatUint(e.pos.seq, 10) + " and reconnect"})
					fmt.Fprintf(w, "event: catchup\ndata: %s\n\n", data)
					e.rc.Flush()
				}
				return
			}
			if e.send(b) != nil {
				return
			}
		}
	}
}
