package config

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/exocortex/exocortex/secrets"
)

func TestLoadSecretsSection(t *testing.T) {
	home := t.TempDir()
	yaml := "secrets:\n  DEPLOY_TOKEN: {env: DEPLOY_TOKEN}\n  DB_PASSWORD: {file: ~/.config/exocortex/db}\n  GITHUB: {keyring: github}\n"
	if err := os.WriteFile(filepath.Join(home, FileName), []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(home)
	if err != nil {
		t.Fatal(err)
	}
	want := secrets.Config{
		"DEPLOY_TOKEN": {Env: "DEPLOY_TOKEN"},
		"DB_PASSWORD":  {File: "~/.config/exocortex/db"},
		"GITHUB":       {Keyring: "github"},
	}
	if len(cfg.Secrets) != len(want) {
		t.Fatalf("secrets = %v", cfg.Secrets)
	}
	for k, v := range want {
		if cfg.Secrets[k] != v {
			t.Errorf("%s = %+v, want %+v", k, cfg.Secrets[k], v)
		}
	}
	if err := os.WriteFile(filepath.Join(home, FileName), []byte("secrets:\n  X: {envv: X}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(home); err == nil {
		t.Error("a misspelt source key was accepted")
	}
}
