package host

import (
	"slices"
	"strings"
	"testing"

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
