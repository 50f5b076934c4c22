package secrets

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
)

const canary = `tok-3f9a"c2/b+1&x`

func envOf(m map[string]string) Env {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func mustStore(t *testing.T, values map[string]string) *Store {
	t.Helper()
	cfg := Config{}
	env := map[string]string{}
	for k, v := range values {
		cfg[k] = Source{Env: "X_" + k}
		env["X_"+k] = v
	}
	s, err := Load(cfg, LoadOptions{Env: envOf(env)})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestLoadSources(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good")
	loose := filepath.Join(dir, "loose")
	unreadable := filepath.Join(dir, "unreadable")
	os.WriteFile(good, []byte("file-secret-value\n"), 0o600)
	os.WriteFile(loose, []byte("file-secret-value"), 0o644)
	os.WriteFile(unreadable, []byte("file-secret-value"), 0o600)
	os.Chmod(loose, 0o644)
	tests := []struct {
		name    string
		src     Source
		env     map[string]string
		kr      Keyring
		want    string // the value, when no error
		wantErr []string
	}{
		{name: "env", src: Source{Env: "TOK"}, env: map[string]string{"TOK": "env-secret-value"}, want: "env-secret-value"},
		{name: "env unset", src: Source{Env: "TOK"}, wantErr: []string{"secret S (env TOK)", "TOK is not set"}},
		{name: "file", src: Source{File: good}, want: "file-secret-value"},
		{name: "file with ~", src: Source{File: "~/good"}, want: "file-secret-value"},
		{name: "loose file", src: Source{File: loose}, wantErr: []string{loose, "0644", "chmod 600"}},
		{name: "missing file", src: Source{File: filepath.Join(dir, "nope")}, wantErr: []string{"nope", "cannot be read"}},
		{name: "directory", src: Source{File: dir}, wantErr: []string{"is a directory"}},
		{name: "keyring", src: Source{Keyring: "github"}, kr: func(s, u string) (string, error) {
			if s != KeyringService || u != "github" {
				return "", errors.New("no such item")
			}
			return "keyring-secret-value", nil
		}, want: "keyring-secret-value"},
		{name: "no keyring running", src: Source{Keyring: "github"}, kr: func(string, string) (string, error) {
			return "", errors.New("The name org.freedesktop.secrets was not provided by any .service files")
		}, wantErr: []string{"secret S (keyring exocortex/github)", "keyring service running", "org.freedesktop.secrets"}},
		{name: "two sources", src: Source{Env: "A", File: good}, wantErr: []string{"exactly one of env, file or keyring"}},
		{name: "no source", src: Source{}, wantErr: []string{"exactly one"}},
		{name: "short", src: Source{Env: "TOK"}, env: map[string]string{"TOK": "abc1234"}, wantErr: []string{"secret S", "7 characters", "under the 8"}},
		{name: "common word", src: Source{Env: "TOK"}, env: map[string]string{"TOK": "Password123"}, wantErr: []string{"secret S", "common word"}},
		{name: "white space", src: Source{Env: "TOK"}, env: map[string]string{"TOK": " spaced-secret"}, wantErr: []string{"white space"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Load(Config{"S": tt.src}, LoadOptions{Home: dir, Env: envOf(tt.env), Keyring: tt.kr})
			if len(tt.wantErr) > 0 {
				if err == nil {
					t.Fatalf("no error; want one with %q", tt.wantErr)
				}
				for _, w := range tt.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not say %q", err, w)
					}
				}
				for _, v := range tt.env {
					if strings.Contains(err.Error(), v) {
						t.Errorf("error %q shows the value", err)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := s.values["S"]; got != tt.want {
				t.Errorf("value %q, want %q", got, tt.want)
			}
		})
	}
}

func TestUnreadableFile(t *testing.T) {
	if os.Getuid() == 0 {
		// root reads a file of mode 0000; a directory without x still stops it.
		dir := t.TempDir()
		sub := filepath.Join(dir, "locked")
		os.Mkdir(sub, 0o700)
		os.WriteFile(filepath.Join(sub, "s"), []byte("file-secret-value"), 0o600)
		_, err := Load(Config{"S": {File: filepath.Join(sub, "s", "x")}}, LoadOptions{})
		if err == nil || !strings.Contains(err.Error(), "cannot be read") {
			t.Fatalf("err = %v", err)
		}
		return
	}
	p := filepath.Join(t.TempDir(), "s")
	os.WriteFile(p, []byte("file-secret-value"), 0o600)
	os.Chmod(p, 0o200)
	_, err := Load(Config{"S": {File: p}}, LoadOptions{})
	if err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "cannot be read") {
		t.Fatalf("err = %v", err)
	}
}

func TestCheckText(t *testing.T) {
	s := mustStore(t, map[string]string{"A": "alpha-secret-1", "B": "bravo-secret-2"})
	err := s.CheckText("the system prompt", "You are an agent. Use bravo-secret-2 wisely.")
	var re *RefusedError
	if !errors.As(err, &re) || re.Name != "B" || strings.Contains(err.Error(), "bravo-secret-2") {
		t.Fatalf("err = %v", err)
	}
	if err := s.CheckText("x", "nothing here"); err != nil {
		t.Fatal(err)
	}
}

func TestMaskForms(t *testing.T) {
	s := mustStore(t, map[string]string{"TOK": canary})
	m := s.Masker()
	b64 := func(p string) string { return base64.StdEncoding.EncodeToString([]byte(p)) }
	j, _ := json.Marshal(canary)
	tests := []struct{ name, text string }{
		{"raw", "the token is " + canary + "."},
		{"json escaped", `{"out": ` + string(j) + `}`},
		{"query escaped", "https://x/?t=" + url.QueryEscape(canary)},
		{"path escaped", "https://x/" + url.PathEscape(canary)},
		{"base64", b64(canary)},
		{"base64 url", base64.URLEncoding.EncodeToString([]byte(canary))},
		{"base64 at offset 0 in longer", b64("abc" + canary + "trailing text")},
		{"base64 at offset 1 in longer", b64("a" + canary + "trailing text")},
		{"base64 at offset 2 in longer", b64("ab" + canary + "trailing text")},
		{"base64 at offset 1, url alphabet", base64.RawURLEncoding.EncodeToString([]byte("user:" + canary + "\n"))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !m.Contains(tt.text) {
				t.Fatalf("Contains(%q) = false", tt.text)
			}
			got := m.Mask(tt.text)
			if !strings.Contains(got, "§§secret(TOK)") {
				t.Errorf("Mask(%q) = %q: no placeholder", tt.text, got)
			}
			if m.Contains(got) {
				t.Errorf("Mask(%q) = %q still holds the secret", tt.text, got)
			}
		})
	}
	plain := "nothing secret here at all"
	if got := m.Mask(plain); got != plain {
		t.Errorf("Mask changed %q to %q", plain, got)
	}
	var nilM *Masker
	if nilM.Mask(canary) != canary || nilM.Contains(canary) {
		t.Error("a nil masker must pass text through")
	}
}

func TestSubstituteJSON(t *testing.T) {
	s := mustStore(t, map[string]string{"TOK": canary, "DB": "db-password-99"})
	tests := []struct {
		name     string
		args     string
		declared []string
		want     map[string]string
		changed  bool
		err      any
	}{
		{name: "any", args: `{"code":"echo §§secret(TOK)"}`, declared: []string{AnyName}, want: map[string]string{"code": "echo " + canary}, changed: true},
		{name: "declared", args: `{"a":"§§secret(DB)/§§secret(DB)"}`, declared: []string{"DB"}, want: map[string]string{"a": "db-password-99/db-password-99"}, changed: true},
		{name: "undeclared tool sees placeholder", args: `{"a":"§§secret(DB)"}`, want: map[string]string{"a": "§§secret(DB)"}},
		{name: "not declared", args: `{"a":"§§secret(TOK)"}`, declared: []string{"DB"}, err: new(*UndeclaredError)},
		{name: "unknown", args: `{"a":"§§secret(NOPE)"}`, declared: []string{AnyName}, err: new(*UnknownError)},
		{name: "none", args: `{"a":"plain"}`, declared: []string{AnyName}, want: map[string]string{"a": "plain"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, changed, err := s.SubstituteJSON(tt.args, "tool_x", tt.declared)
			if tt.err != nil {
				if err == nil || !errors.As(err, tt.err) {
					t.Fatalf("err = %v, want %T", err, tt.err)
				}
				if strings.Contains(err.Error(), canary) || strings.Contains(err.Error(), "db-password-99") {
					t.Errorf("error %q shows a value", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got map[string]string
			if err := json.Unmarshal([]byte(out), &got); err != nil {
				t.Fatalf("%s: %v", out, err)
			}
			for k, v := range tt.want {
				if got[k] != v {
					t.Errorf("%s = %q, want %q", k, got[k], v)
				}
			}
			if changed != tt.changed {
				t.Errorf("changed = %v", changed)
			}
		})
	}
	_, _, err := s.SubstituteJSON(`{"a":"§§secret(NOPE)"}`, "t", nil)
	if err == nil || !strings.Contains(err.Error(), "DB, TOK") {
		t.Errorf("unknown name error %v does not list the known secrets", err)
	}
}

func TestMaskProto(t *testing.T) {
	m := mustStore(t, map[string]string{"TOK": canary}).Masker()
	hist := &exocortexv1.Message{Content: "out: " + canary, Metadata: map[string]string{"k": canary}}
	req := &exocortexv1.MonologueEndRequest{FinalResponse: "ok", History: []*exocortexv1.Message{hist, {Content: "plain"}}}
	got := MaskProto(m, req)
	if got == req {
		t.Fatal("a request with a secret came back unmasked")
	}
	if hist.Content != "out: "+canary {
		t.Error("MaskProto changed the caller's message")
	}
	if c := got.GetHistory()[0].GetContent(); c != "out: §§secret(TOK)" {
		t.Errorf("content %q", c)
	}
	if v := got.GetHistory()[0].GetMetadata()["k"]; v != "§§secret(TOK)" {
		t.Errorf("map value %q", v)
	}
	clean := &exocortexv1.MonologueEndRequest{FinalResponse: "ok"}
	if MaskProto(m, clean) != clean {
		t.Error("a clean request was copied")
	}
}

func TestWriter(t *testing.T) {
	var b strings.Builder
	w := NewWriter(&b)
	w.SetMasker(mustStore(t, map[string]string{"TOK": canary}).Masker())
	n, err := w.Write([]byte("level=INFO msg=x arg=" + canary + "\n"))
	if err != nil || n != len("level=INFO msg=x arg=")+len(canary)+1 {
		t.Fatalf("n=%d err=%v", n, err)
	}
	if strings.Contains(b.String(), canary) || !strings.Contains(b.String(), "§§secret(TOK)") {
		t.Errorf("log line %q", b.String())
	}
}

func TestMaskProtoAny(t *testing.T) {
	m := mustStore(t, map[string]string{"TOK": canary}).Masker()
	v, err := anypb.New(wrapperspb.String("state " + canary))
	if err != nil {
		t.Fatal(err)
	}
	req := &exocortexv1.StateEntry{Key: "k", Value: v}
	got := MaskProto(m, req)
	inner, err := got.GetValue().UnmarshalNew()
	if err != nil {
		t.Fatalf("the masked Any does not unpack: %v", err)
	}
	if s := inner.(*wrapperspb.StringValue).GetValue(); s != "state §§secret(TOK)" {
		t.Errorf("inner = %q", s)
	}
}
