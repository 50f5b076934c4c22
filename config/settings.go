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

// SecretSettings returns the secret keys a plugin may receive, those declared
// secret:"true" plugin:"true" (tools.web_search.api_key), with their values,
// the environment's overrides applied, "" when unset. The host masks the
// values set like the secrets: section's and hands one only to a plugin that
// declares it (docs/secrets.md); the plugin settings never carry them. The
// other secret keys (serve's API keys) reach no plugin at all.
func (c Config) SecretSettings() map[string]string {
	out, _ := c.secretSettings()
	return out
}

// SecretSettingsEnv lists the environment variables SecretSettings may be
// read from (EXOCORTEX_SEARCH_API_KEY), which no plugin may see.
func (c Config) SecretSettingsEnv() []string {
	_, env := c.secretSettings()
	return env
}

func (c Config) secretSettings() (map[string]string, []string) {
	v := reflect.ValueOf(c)
	out := map[string]string{}
	var env []string
	for _, f := range fields(v.Type()) {
		if f.sf.Tag.Get("secret") != "true" || f.sf.Tag.Get("plugin") != "true" || f.entries {
			continue
		}
		out[f.path] = v.FieldByIndex(f.index).String()
		if e := f.sf.Tag.Get("env"); e != "" {
			env = append(env, e)
		}
	}
	return out, env
}
