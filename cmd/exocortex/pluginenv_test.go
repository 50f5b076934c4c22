package main

import (
	"testing"

	"github.com/exocortex/exocortex/config"
)

// pluginEnv is what the app gives the plugins it starts (app.hostOptions), for
// the tests that start a host themselves: the home, the project, and the
// session's settings read from home's config.yaml (the tools' among them,
// resolved against project), then extra.
func pluginEnv(t testing.TB, home, project string, extra ...string) []string {
	t.Helper()
	cfg, err := config.Load(home)
	if err != nil {
		t.Fatal(err)
	}
	settings, err := cfg.PluginSettingsEnv(home, project)
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{config.HomeEnv + "=" + home, config.EnvProject + "=" + project, settings}, extra...)
}
