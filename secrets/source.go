package secrets

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Source is where one secret's value comes from: exactly one of Env, File and
// Keyring is set (config.yaml: {env: VAR}, {file: PATH}, {keyring: NAME}).
type Source struct {
	Env     string `yaml:"env,omitempty" json:"env,omitempty"`
	File    string `yaml:"file,omitempty" json:"file,omitempty"`
	Keyring string `yaml:"keyring,omitempty" json:"keyring,omitempty"`
}

// KeyringService is the keyring service the secrets' items are filed under:
// {keyring: github} reads the item "github" of service "exocortex" (store one
// with `secret-tool store --label=github service exocortex username github`
// or your desktop's keyring manager).
const KeyringService = "exocortex"

// Kind is "env", "file" or "keyring" ("" when none is set).
func (s Source) Kind() string {
	switch {
	case s.Env != "":
		return "env"
	case s.File != "":
		return "file"
	case s.Keyring != "":
		return "keyring"
	}
	return ""
}

// String is the source as the operator wrote it, e.g. "env DEPLOY_TOKEN";
// never a value.
func (s Source) String() string {
	switch s.Kind() {
	case "env":
		return "env " + s.Env
	case "file":
		return "file " + s.File
	case "keyring":
		return "keyring " + KeyringService + "/" + s.Keyring
	}
	return "(no source)"
}

// validate checks the source names exactly one place.
func (s Source) validate(name string) error {
	n := 0
	for _, v := range []string{s.Env, s.File, s.Keyring} {
		if v != "" {
			n++
		}
	}
	if n != 1 {
		return fmt.Errorf("secret %s: give exactly one of env, file or keyring (e.g. %s: {env: %s})", name, name, name)
	}
	return nil
}

// Env reads environment variables (os.LookupEnv in production).
type Env func(string) (string, bool)

// Keyring reads an item from the desktop keyring (zalando/go-keyring's Get in
// production).
type Keyring func(service, user string) (string, error)

// read fetches the value of one source.
func (s Source) read(name, home string, env Env, kr Keyring) (string, error) {
	switch s.Kind() {
	case "env":
		v, ok := env(s.Env)
		if !ok || v == "" {
			return "", &SourceError{Name: name, Source: s, Problem: "the environment variable " + s.Env + " is not set (export it before starting exocortex)"}
		}
		return v, nil
	case "file":
		return readFile(name, s, home)
	case "keyring":
		if kr == nil {
			return "", &SourceError{Name: name, Source: s, Problem: "no keyring is available here"}
		}
		v, err := kr(KeyringService, s.Keyring)
		if err != nil {
			return "", &SourceError{Name: name, Source: s, Problem: "the keyring could not give the item (is a keyring service running? on a machine without one use env: or file:)", Err: err}
		}
		return v, nil
	}
	return "", s.validate(name)
}

// expandHome resolves a leading ~ against the user's home directory.
func expandHome(path, home string) string {
	if path == "~" {
		return home
	}
	if rest, ok := strings.CutPrefix(path, "~/"); ok && home != "" {
		return filepath.Join(home, rest)
	}
	return path
}

// readFile reads a secret file, refusing one others may read: a value readable
// by the group or the world is not a secret any more.
func readFile(name string, s Source, home string) (string, error) {
	path := expandHome(s.File, home)
	fi, err := os.Stat(path)
	if err != nil {
		return "", &SourceError{Name: name, Source: s, Problem: "the file " + path + " cannot be read", Err: err}
	}
	if fi.IsDir() {
		return "", &SourceError{Name: name, Source: s, Problem: "the file " + path + " is a directory"}
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return "", &SourceError{Name: name, Source: s, Problem: fmt.Sprintf("the file %s has mode %04o, which lets others read it; it must be 0600 (chmod 600 %s)", path, perm, path)}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", &SourceError{Name: name, Source: s, Problem: "the file " + path + " cannot be read", Err: err}
	}
	// One trailing line break is the editor's, not the secret's.
	v := strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r")
	if v == "" {
		return "", &SourceError{Name: name, Source: s, Problem: "the file " + path + " is empty"}
	}
	return v, nil
}

// SourceError is a secret whose value could not be read. It names the secret
// and its source, never a value.
type SourceError struct {
	Name    string
	Source  Source
	Problem string
	Err     error
}

func (e *SourceError) Error() string {
	s := "secret " + e.Name + " (" + e.Source.String() + "): " + e.Problem
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *SourceError) Unwrap() error { return e.Err }
