package staging

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// SchemaVersion is the version written in every record's "v" field. A reader refuses
// records with a higher version (they come from a newer Exocortex) instead of
// guessing at their meaning.
const SchemaVersion = 1

// Record is one line of the log.
type Record struct {
	V       int             `json:"v"`
	Seq     uint64          `json:"seq"`
	TS      time.Time       `json:"ts"`
	Kind    string          `json:"kind"`
	Session string          `json:"session,omitempty"`
	Payload json.RawMessage `json:"payload"`
}

// Decode unmarshals the record's payload into dst.
func (r Record) Decode(dst any) error {
	if err := json.Unmarshal(r.Payload, dst); err != nil {
		return fmt.Errorf("staging: decoding the payload of record %d (%s): %w", r.Seq, r.Kind, err)
	}
	return nil
}

// Entry is a record to append: the log fills in the version, sequence number and
// timestamp.
type Entry struct {
	Kind    string
	Session string
	// TS, when set, stamps the record instead of the log's clock: a batch
	// process (a sleep run) gives every record of a run the run's own time.
	TS time.Time
	// Payload is encoded with encoding/json; a json.RawMessage is used as it is
	// (compacted). nil becomes {}.
	Payload any
}

// ErrNewerVersion is wrapped by errors for records written by a newer schema.
var ErrNewerVersion = errors.New("record written by a newer Exocortex (schema version too high)")

// encodeLine renders one record as a complete line, newline included. The field
// order is fixed ("v" then "seq" first) so that readers can find a line's sequence
// number without decoding the whole line.
func encodeLine(buf *bytes.Buffer, seq uint64, ts time.Time, kind, session string, payload []byte) {
	buf.WriteString(`{"v":`)
	buf.WriteString(strconv.Itoa(SchemaVersion))
	buf.WriteString(`,"seq":`)
	buf.WriteString(strconv.FormatUint(seq, 10))
	buf.WriteString(`,"ts":"`)
	buf.WriteString(ts.UTC().Format(time.RFC3339Nano))
	buf.WriteString(`","kind":`)
	writeJSONString(buf, kind)
	if session != "" {
		buf.WriteString(`,"session":`)
		writeJSONString(buf, session)
	}
	buf.WriteString(`,"payload":`)
	buf.Write(payload)
	buf.WriteString("}\n")
}

func writeJSONString(buf *bytes.Buffer, s string) {
	b, _ := json.Marshal(s) // a string always marshals
	buf.Write(b)
}

// EncodePayload is an Entry's payload as the journal writes it: compact JSON
// without HTML escaping ({} for nil). A client that sends entries to the
// journal's owner encodes them with it.
func EncodePayload(p any) ([]byte, error) { return encodePayload(p) }

// encodePayload turns a payload into compact JSON without HTML escaping.
func encodePayload(p any) ([]byte, error) {
	if p == nil {
		return []byte("{}"), nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(p); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// parseLine decodes and validates one line (without its newline). The error says
// what is wrong in words fit for a report.
func parseLine(line []byte) (Record, error) {
	var r Record
	if len(bytes.TrimSpace(line)) == 0 {
		return r, errors.New("empty line")
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	if err := dec.Decode(&r); err != nil {
		return r, fmt.Errorf("not a JSON record: %v", err)
	}
	if dec.More() {
		return r, errors.New("text after the JSON record")
	}
	switch {
	case r.V == 0:
		return r, errors.New(`missing schema version "v"`)
	case r.V > SchemaVersion:
		return r, fmt.Errorf("%w: v=%d, this build reads up to v=%d", ErrNewerVersion, r.V, SchemaVersion)
	case r.Seq == 0:
		return r, errors.New(`missing sequence number "seq"`)
	case r.Kind == "":
		return r, errors.New(`missing "kind"`)
	case len(r.Payload) == 0:
		return r, errors.New(`missing "payload"`)
	}
	return r, nil
}

// quickSeq reads the sequence number of a line this package wrote, without decoding
// it: such lines start with {"v":1,"seq":N,. ok is false for any other shape.
func quickSeq(line []byte) (seq uint64, ok bool) {
	const prefix = `{"v":1,"seq":`
	if !bytes.HasPrefix(line, []byte(prefix)) {
		return 0, false
	}
	rest := line[len(prefix):]
	i := 0
	for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
		i++
	}
	if i == 0 || i >= len(rest) || rest[i] != ',' {
		return 0, false
	}
	n, err := strconv.ParseUint(string(rest[:i]), 10, 64)
	if err != nil {
		return 0, false
	}
	return n, true
}

// checkLine validates a line cheaply when it has the shape this package writes
// (quickSeq plus json.Valid), and falls back to a full parse otherwise.
func checkLine(line []byte) (uint64, error) {
	if seq, ok := quickSeq(line); ok && seq > 0 && bytes.Contains(line, []byte(`"kind":`)) &&
		bytes.Contains(line, []byte(`"payload":`)) && json.Valid(line) {
		return seq, nil
	}
	r, err := parseLine(line)
	return r.Seq, err
}
