package secrets

import (
	"errors"
	"fmt"
	"regexp"
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
}

// Store holds the secrets' values. A nil *Store has no secrets: every method
// is safe on it.
type Store struct {
	names   []string
	sources map[string]Source
	values  map[string]string
	masker  *Masker
}

var nameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// Load reads every secret of cfg and checks each value can be masked. The
// error names every secret that failed (errors.Join of *SourceError and
// *RefusedError), never a value.
func Load(cfg Config, opts LoadOptions) (*Store, error) {
	if len(cfg) == 0 {
		return nil, nil
	}
	env := opts.Env
	if env == nil {
		env = osLookupEnv
	}
	s := &Store{sources: map[string]Source{}, values: map[string]string{}}
	var errs []error
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
	s.masker = newMasker(s.values)
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
