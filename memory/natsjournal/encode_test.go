package natsjournal

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/exocortex/exocortex/memory"
	"github.com/exocortex/exocortex/staging"
)

// TestEncodeIsMarshal: Encode writes the bytes json.Marshal gives for the
// wire form (what earlier builds stored), whatever the payload holds.
func TestEncodeIsMarshal(t *testing.T) {
	ts := time.Date(2026, 12, 2, 19, 41, 30, 123456789, time.FixedZone("x", 3600))
	for _, tc := range []struct {
		name string
		e    staging.Entry
	}{
		{"upsert", staging.Entry{Kind: memory.KindUpsert, Payload: memory.UpsertEvent{ID: "r1", Area: memory.AreaMain, Text: "a note"}}},
		{"html and line separators", staging.Entry{Kind: memory.KindUpsert, Session: "s<1>&", Payload: memory.UpsertEvent{ID: "r2", Area: memory.AreaMain, Text: "a <b> & c \u2028 d \u2029 é 🙂 \"q\" \\ \t"}}},
		{"raw payload", staging.Entry{Kind: "memory.archive", Payload: json.RawMessage(`{"id":"r3","reason":"x > y"}`)}},
		{"spaced raw payload", staging.Entry{Kind: "memory.archive", Payload: json.RawMessage(`{ "id" : "r4" ,"from":["a", "b"] }`)}},
		{"no payload", staging.Entry{Kind: "memory.note"}},
		{"zero time", staging.Entry{Kind: "memory.note", Payload: map[string]any{"k": 1.5}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			at := ts
			if tc.name == "zero time" {
				at = time.Time{}
			}
			got, p, err := Encode(tc.e, at)
			if err != nil {
				t.Fatal(err)
			}
			want, err := json.Marshal(wire{V: staging.SchemaVersion, TS: at.UTC(), Kind: tc.e.Kind, Session: tc.e.Session, Payload: p})
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Fatalf("Encode:\n got %s\nwant %s", got, want)
			}
			if r, err := Decode(7, got); err != nil || r.Seq != 7 || r.Kind != tc.e.Kind || r.Session != tc.e.Session || !r.TS.Equal(at.UTC()) {
				t.Fatalf("Decode: %v %+v", err, r)
			}
		})
	}
}
