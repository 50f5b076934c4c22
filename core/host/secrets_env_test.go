package host

import (
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/secrets"
)

// A plugin's environment has neither the variables the secrets come from nor
// those of the secret settings (EXOCORTEX_SEARCH_API_KEY): it gets a value
// only from a tool call that declares it, or from GetSettingSecret.
func TestPluginEnvironHidesSecretVariables(t *testing.T) {
	t.Setenv("EXO_TEST_SECRET_SRC", "s3cret-value-0123")
	t.Setenv("EXO_TEST_SETTING_KEY", "tvly-setting-0123")
	t.Setenv("EXO_TEST_PLAIN", "kept")
	store, err := secrets.Load(secrets.Config{"TOKEN": {Env: "EXO_TEST_SECRET_SRC"}}, secrets.LoadOptions{
		Settings: map[string]string{"tools.web_search.api_key": "tvly-setting-0123"}, SettingsEnv: []string{"EXO_TEST_SETTING_KEY"}})
	if err != nil {
		t.Fatal(err)
	}
	h := &Host{opts: Options{Secrets: store}}
	env := h.pluginEnviron()
	for _, hidden := range []string{"EXO_TEST_SECRET_SRC=", "EXO_TEST_SETTING_KEY="} {
		if slices.ContainsFunc(env, func(kv string) bool { return strings.HasPrefix(kv, hidden) }) {
			t.Errorf("the plugin's environment has %s…", hidden)
		}
	}
	if !slices.Contains(env, "EXO_TEST_PLAIN=kept") {
		t.Error("the plugin's environment lost an ordinary variable")
	}
	if got := store.Masker().Mask("key tvly-setting-0123"); got != "key §§secret(tools.web_search.api_key)" {
		t.Errorf("the setting's value is masked as %q", got)
	}
}

// GetSettingSecret answers a plugin that declares the key, and refuses one
// that does not, or a key that is no secret setting, naming what to do.
func TestGetSettingSecret(t *testing.T) {
	const key = "tools.web_search.api_key"
	store, err := secrets.Load(nil, secrets.LoadOptions{Settings: map[string]string{key: "tvly-setting-0123"}})
	if err != nil {
		t.Fatal(err)
	}
	h := &Host{opts: Options{Secrets: store}, services: &Services{}}
	h.services.host = h
	tests := []struct {
		name     string
		declares []string
		key      string
		want     string // the value, or a part of the error
		code     codes.Code
	}{
		{"declared", []string{key}, key, "tvly-setting-0123", codes.OK},
		{"not declared", nil, key, "does not declare it in setting_secrets", codes.PermissionDenied},
		{"declared, but no secret setting", []string{"tools.web_search.url"}, "tools.web_search.url", "is not a secret setting", codes.NotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &Plugin{h: h, manifest: &exocortexv1.ManifestResponse{Plugin: "p", SettingSecrets: tt.declares}}
			p.cand.Name = "p"
			resp, err := h.services.forPlugin(p).GetSettingSecret(t.Context(), &exocortexv1.GetSettingSecretRequest{Key: tt.key})
			if status.Code(err) != tt.code {
				t.Fatalf("GetSettingSecret: %v, want code %v", err, tt.code)
			}
			got := resp.GetValue()
			if err != nil {
				got = err.Error()
			}
			if !strings.Contains(got, tt.want) {
				t.Fatalf("GetSettingSecret: %q, want %q", got, tt.want)
			}
		})
	}
}
