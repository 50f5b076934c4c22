package config

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"
)

// rule is what a duration or a count may be, declared once on its field with
// a check tag and applied by one function to every such key (the file's, the
// environment's, a map's entries alike):
//
//	check:"positive"      above zero
//	check:"nonnegative"   0 or more (the zero tag says what 0 means; else the default)
//	check:"nonnegative|-1" 0 or more, or -1 for none
//	check:"any"           any value (the doc comment says what a negative one means)
//
// A duration or count without a check tag is a programming error that
// TestEveryNumberHasARule catches.
type rule struct {
	kind  string
	zero  string
	minus bool
}

func ruleOf(f field) rule {
	tag := f.sf.Tag.Get("check")
	kind, minus := strings.CutSuffix(tag, "|-1")
	return rule{kind: kind, zero: f.sf.Tag.Get("zero"), minus: minus}
}

// numeric reports whether values of t are durations or counts.
func numeric(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Int, reflect.Int32, reflect.Int64, reflect.Float32, reflect.Float64:
		return true
	}
	return false
}

// allows reports whether v satisfies the rule.
func (r rule) allows(v reflect.Value) bool {
	var x float64
	switch v.Kind() {
	case reflect.Float32, reflect.Float64:
		x = v.Float()
	default:
		x = float64(v.Int())
	}
	switch r.kind {
	case "positive":
		return x > 0
	case "nonnegative":
		return x >= 0 || (r.minus && x == -1)
	case "any":
		return true
	}
	return false
}

// describe says what the rule wants, for `config keys` and the errors.
func (r rule) describe(t reflect.Type) string {
	if !numeric(t) {
		return ""
	}
	what := "a whole number"
	switch {
	case t == durationType:
		what = "a duration (e.g. 10s, 2m, 1h30m)"
	case t.Kind() == reflect.Float32 || t.Kind() == reflect.Float64:
		what = "a number"
	}
	switch r.kind {
	case "positive":
		return what + " above zero"
	case "nonnegative":
		s := what + " of 0 or more"
		if r.zero != "" {
			s += " (0 " + r.zero + ")"
		} else {
			s += " (0 takes the default)"
		}
		if r.minus {
			s += ", or -1 for none"
		}
		return s
	case "any":
		return what
	}
	return "(no rule declared)"
}

// valueText renders v for an error message.
func valueText(v reflect.Value) string {
	if v.Type() == durationType {
		return time.Duration(v.Int()).String()
	}
	return fmt.Sprint(v.Interface())
}

// Validate checks every duration and count against the rule its field
// declares (one rule for all; see rule), and every choice against its
// allowed values. It returns the problems, each naming the key as written
// in config.yaml.
func (c Config) validate() []Problem {
	var out []Problem
	v := reflect.ValueOf(c)
	def := reflect.ValueOf(defaults())
	for _, f := range fields(v.Type()) {
		fv := v.FieldByIndex(f.index)
		r := ruleOf(f)
		check := func(key string, x reflect.Value) {
			if numeric(x.Type()) && !r.allows(x) {
				msg := fmt.Sprintf("%s is not allowed: give %s", valueText(x), r.describe(x.Type()))
				if d := def.FieldByIndex(f.index); !f.entries && !d.IsZero() {
					msg += fmt.Sprintf("; the default is %s", valueText(d))
				}
				out = append(out, Problem{Key: key, Message: msg})
			}
		}
		if f.entries {
			for _, k := range sortedKeys(fv) {
				check(f.path+"."+k, fv.MapIndex(reflect.ValueOf(k)))
			}
			continue
		}
		check(f.path, fv)
		if a := f.sf.Tag.Get("allowed"); a != "" && fv.Kind() == reflect.String && fv.String() != "" {
			allowed := strings.Split(a, ",")
			if !slices.Contains(allowed, fv.String()) {
				out = append(out, Problem{Key: f.path, Message: fmt.Sprintf("%q is not one of %s", fv.String(), strings.Join(allowed, ", ")),
					Suggest: closest(fv.String(), allowed)})
			}
		}
	}
	return out
}

// Validate checks the values a YAML type cannot (validate), all at once.
func (c Config) Validate() error {
	if ps := c.validate(); len(ps) > 0 {
		return Problems(ps)
	}
	return nil
}
