// Package toolargs decodes the arguments object a model gives a tool, leniently:
// local models write numbers as strings ("session": "0"), a list as one string
// ("tags": "a, b") and booleans as "true". The tools of the built-in plugins decode
// into structs whose fields use these types, and report a bad argument by name.
package toolargs

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
)

// Decode unmarshals the arguments object into dst, a pointer to a struct. Unknown
// arguments are ignored (models add their own); the error names the tool and
// the argument that did not decode.
func Decode(tool string, args json.RawMessage, dst any) error {
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(args, &fields); err != nil {
		return fmt.Errorf("%s: the arguments must be a JSON object: %w", tool, err)
	}
	if err := json.Unmarshal(args, dst); err != nil {
		// Find the argument at fault by decoding each alone into a fresh value.
		keys := make([]string, 0, len(fields))
		for k := range fields {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			one, _ := json.Marshal(map[string]json.RawMessage{k: fields[k]})
			fresh := reflect.New(reflect.TypeOf(dst).Elem()).Interface()
			if ferr := json.Unmarshal(one, fresh); ferr != nil {
				return fmt.Errorf("%s: argument %q: %s", tool, k, strings.TrimPrefix(ferr.Error(), "json: "))
			}
		}
		return fmt.Errorf("%s: the arguments do not decode: %w", tool, err)
	}
	return nil
}

// unquote returns the text of a JSON string, or the raw token otherwise.
func unquote(b []byte) (string, bool) {
	var s string
	if len(b) > 0 && b[0] == '"' {
		if err := json.Unmarshal(b, &s); err == nil {
			return strings.TrimSpace(s), true
		}
	}
	return string(b), false
}

// Int is an integer given as 3, 3.0 or "3". Set tells whether it was given.
type Int struct {
	V   int
	Set bool
}

// UnmarshalJSON accepts a number or a string holding one; null and "" mean unset.
func (i *Int) UnmarshalJSON(b []byte) error {
	s, _ := unquote(b)
	if s == "null" || s == "" {
		*i = Int{}
		return nil
	}
	if n, err := strconv.Atoi(s); err == nil {
		*i = Int{V: n, Set: true}
		return nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f != float64(int(f)) {
		return fmt.Errorf("want a whole number, got %s", b)
	}
	*i = Int{V: int(f), Set: true}
	return nil
}

// Float is a number given as 0.7 or "0.7".
type Float struct {
	V   float64
	Set bool
}

// UnmarshalJSON accepts a number or a string holding one; null and "" mean unset.
func (f *Float) UnmarshalJSON(b []byte) error {
	s, _ := unquote(b)
	if s == "null" || s == "" {
		*f = Float{}
		return nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return fmt.Errorf("want a number, got %s", b)
	}
	*f = Float{V: v, Set: true}
	return nil
}

// Bool is a boolean given as true, "true", "yes", 1 or "1".
type Bool struct {
	V   bool
	Set bool
}

// UnmarshalJSON accepts JSON booleans and their common spellings.
func (v *Bool) UnmarshalJSON(b []byte) error {
	s, _ := unquote(b)
	switch strings.ToLower(s) {
	case "null", "":
		*v = Bool{}
	case "true", "yes", "1", "on":
		*v = Bool{V: true, Set: true}
	case "false", "no", "0", "off":
		*v = Bool{V: false, Set: true}
	default:
		return fmt.Errorf("want true or false, got %s", b)
	}
	return nil
}

// Strings is a list of strings given as ["a","b"] or as one string "a, b"
// (split on commas). Empty entries are dropped.
type Strings []string

// UnmarshalJSON accepts an array of strings (numbers are turned into text) or a
// comma-separated string.
func (l *Strings) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if bytes.Equal(b, []byte("null")) {
		*l = nil
		return nil
	}
	var out []string
	if len(b) > 0 && b[0] == '[' {
		var raw []json.RawMessage
		if err := json.Unmarshal(b, &raw); err != nil {
			return fmt.Errorf("want a list of strings, got %s", b)
		}
		for _, r := range raw {
			s, _ := unquote(r)
			if s = strings.TrimSpace(s); s != "" && s != "null" {
				out = append(out, s)
			}
		}
	} else {
		s, ok := unquote(b)
		if !ok {
			return fmt.Errorf("want a list of strings, got %s", b)
		}
		for _, part := range strings.Split(s, ",") {
			if part = strings.TrimSpace(part); part != "" {
				out = append(out, part)
			}
		}
	}
	*l = out
	return nil
}

// Text is a string that also accepts a number or boolean (written as text), so
// {"session": 0} and {"session": "0"} both decode into a Text field.
type Text string

// UnmarshalJSON accepts a string, a number or a boolean; null means "".
func (t *Text) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if bytes.Equal(b, []byte("null")) {
		*t = ""
		return nil
	}
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*t = Text(s)
		return nil
	}
	if len(b) > 0 && (b[0] == '{' || b[0] == '[') {
		return fmt.Errorf("want text, got %s", b)
	}
	*t = Text(b)
	return nil
}
