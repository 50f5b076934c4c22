package secrets

import (
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// MinLength is the shortest value the masker accepts: a shorter one would
// match ordinary text and its encodings would be too short to catch safely.
const MinLength = 8

// Config is config.yaml's secrets: section, by name.
type Config map[string]Source

// LoadOptions say where values are read from.
type LoadOptions struct {
	// Home resolves ~ in file sources (the user's home directory).
	Home string
	// Env reads the environment (os.LookupEnv when nil).
	Env Env
	// Keyring reads the desktop keyring (nil: keyring sources fail with a
	// clear error).
	Keyring Keyring
	// Settings are config.yaml's secret settings, by key
	// (tools.web_search.api_key: value, "" when unset): masked like the
	// secrets, handed by the host only to a plugin that declares the key
	// (Setting), and never a placeholder the model may use.
	Settings map[string]string
	// SettingsEnv are the environment variables the settings may come from
	// (EXOCORTEX_SEARCH_API_KEY): the host removes them from its plugins'
	// environment, as it removes the secrets' env sources (HiddenEnv).
	SettingsEnv []string
}

// Store holds the secrets' values. A nil *Store has no secrets: every method
// is safe on it.
type Store struct {
	names   []string
	sources map[string]Source
	values  map[string]string
	// settings are the secret settings, by key (LoadOptions.Settings).
	settings    map[string]string
	settingsEnv []string
	masker      *Masker
}

var nameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// Load reads every secret of cfg and checks each value can be masked. The
// error names every secret that failed (errors.Join of *SourceError and
// *RefusedError), never a value.
func Load(cfg Config, opts LoadOptions) (*Store, error) {
	if len(cfg) == 0 && !slices.ContainsFunc(slices.Collect(maps.Values(opts.Settings)), func(v string) bool { return v != "" }) {
		return nil, nil // nothing to mask
	}
	env := opts.Env
	if env == nil {
		env = osLookupEnv
	}
	s := &Store{sources: map[string]Source{}, values: map[string]string{}, settings: map[string]string{}, settingsEnv: slices.Clone(opts.SettingsEnv)}
	var errs []error
	masked := map[string]string{}
	for key, v := range opts.Settings {
		s.settings[key] = v
		if v == "" {
			continue
		}
		if err := refuse(key, Source{}, v); err != nil {
			errs = append(errs, fmt.Errorf("the secret setting %s of config.yaml is refused: %s", key, err.(*RefusedError).Reason))
			continue
		}
		masked[key] = v
	}
	for name := range cfg {
		s.names = append(s.names, name)
	}
	sort.Strings(s.names)
	for _, name := range s.names {
		src := cfg[name]
		s.sources[name] = src
		if !nameRE.MatchString(name) {
			errs = append(errs, fmt.Errorf("secret %q: a name is letters, digits and _, starting with a letter (it is written §§secret(NAME))", name))
			continue
		}
		if err := src.validate(name); err != nil {
			errs = append(errs, err)
			continue
		}
		v, err := src.read(name, opts.Home, env, opts.Keyring)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if err := refuse(name, src, v); err != nil {
			errs = append(errs, err)
			continue
		}
		s.values[name] = v
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	for name, v := range s.values {
		masked[name] = v
	}
	s.masker = newMasker(masked)
	return s, nil
}

// RefusedError is a secret whose value cannot be masked safely.
type RefusedError struct {
	Name   string
	Source Source
	Reason string
}

func (e *RefusedError) Error() string {
	return "secret " + e.Name + " (" + e.Source.String() + ") is refused: " + e.Reason
}

func refuse(name string, src Source, v string) error {
	switch {
	case len(v) < MinLength:
		return &RefusedError{Name: name, Source: src, Reason: fmt.Sprintf("its value has %d characters, under the %d a value needs to be masked without masking ordinary text; use a longer secret", len(v), MinLength)}
	case strings.TrimSpace(v) != v:
		return &RefusedError{Name: name, Source: src, Reason: "its value begins or ends with white space, which tools and logs drop; remove it"}
	case isCommonWord(v):
		return &RefusedError{Name: name, Source: src, Reason: "its value is a common word or password, which ordinary text contains; use a real secret"}
	}
	return nil
}

// Names lists the secrets, sorted.
func (s *Store) Names() []string {
	if s == nil {
		return nil
	}
	return append([]string(nil), s.names...)
}

// Source is where the secret name comes from.
func (s *Store) Source(name string) (Source, bool) {
	if s == nil {
		return Source{}, false
	}
	src, ok := s.sources[name]
	return src, ok
}

// Setting returns the value of the secret setting key (LoadOptions.Settings),
// "" when it is unset, and whether key is a secret setting at all.
func (s *Store) Setting(key string) (string, bool) {
	if s == nil {
		return "", false
	}
	v, ok := s.settings[key]
	return v, ok
}

// HiddenEnv lists the environment variables no plugin may see: the env
// sources of the secrets and the variables of the secret settings.
func (s *Store) HiddenEnv() []string {
	if s == nil {
		return nil
	}
	out := slices.Clone(s.settingsEnv)
	for _, n := range s.names {
		if src := s.sources[n]; src.Env != "" {
			out = append(out, src.Env)
		}
	}
	return out
}

// SettingKeys lists the secret settings' keys, sorted.
func (s *Store) SettingKeys() []string {
	if s == nil {
		return nil
	}
	keys := make([]string, 0, len(s.settings))
	for k := range s.settings {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Masker is the store's masker (nil for a nil store: it masks nothing).
func (s *Store) Masker() *Masker {
	if s == nil {
		return nil
	}
	return s.masker
}

// CheckText refuses every secret whose value appears in text (the system
// prompt's own text): masking it would change the prompt, and leaving it
// would send the value.
func (s *Store) CheckText(what, text string) error {
	if s == nil {
		return nil
	}
	var errs []error
	for _, name := range s.names {
		if v := s.values[name]; v != "" && strings.Contains(text, v) {
			errs = append(errs, &RefusedError{Name: name, Source: s.sources[name], Reason: "its value appears in " + what + "; change the secret or the prompt"})
		}
	}
	return errors.Join(errs...)
}
