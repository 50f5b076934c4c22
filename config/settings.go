package config

import (
	"reflect"
)

// Setting is one key's effective value and where it came from, as
// `exocortex config` shows it.
type Setting struct {
	Key    string `json:"key"`
	Value  string `json:"value"`
	Origin Origin `json:"origin"`
}

// Settings lists every key of the configuration with its value, in the
// order of the declaration; a map lists each entry as KEY.NAME (an empty
// map is one line with no value). The tools' defaults are filled in as the
// tool plugins fill them in for project (Tools.WithDefaults), and a secret's
// value is "(set)" or "", never the secret.
func (l *Loaded) Settings(project string) []Setting {
	c := l.Config
	t := c.Tools
	t.ProjectDir = project
	c.Tools = t.WithDefaults()
	v := reflect.ValueOf(c)
	var out []Setting
	for _, f := range fields(v.Type()) {
		fv := v.FieldByIndex(f.index)
		if f.entries && fv.Len() > 0 {
			for _, k := range sortedKeys(fv) {
				key := f.path + "." + k
				out = append(out, Setting{Key: key, Value: format(fv.MapIndex(reflect.ValueOf(k))), Origin: l.Origin(key)})
			}
			continue
		}
		val := format(fv)
		if f.sf.Tag.Get("secret") == "true" && val != "" {
			val = "(set)"
		}
		out = append(out, Setting{Key: f.path, Value: val, Origin: l.Origin(f.path)})
	}
	return out
}
