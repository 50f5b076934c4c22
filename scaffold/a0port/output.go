package a0port

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"

	"github.com/exocortex/exocortex/sdk/python"
	"gopkg.in/yaml.v3"
)

// writePlugin writes main.py, plugin.json, the shims and the SDK into out.
func writePlugin(out, name, interpreter string) error {
	files := map[string]string{
		"main.py":     fmt.Sprintf(mainPy, name, name),
		"plugin.json": "",
	}
	// The shims of the modules the layer provides (Modules), each package
	// directory with its __init__.py.
	for _, m := range Modules() {
		files[m.Shim()] = m.shimSource()
		for d := path.Dir(m.Shim()); d != "."; d = path.Dir(d) {
			files[d+"/__init__.py"] = ""
		}
	}
	pj, _ := json.Marshal(map[string][]string{"command": {interpreter, "main.py"}})
	files["plugin.json"] = string(pj) + "\n"
	for n, body := range files {
		p := filepath.Join(out, filepath.FromSlash(n))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return fmt.Errorf("creating %s: %w", filepath.Dir(p), err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			return fmt.Errorf("writing %s: %w", p, err)
		}
	}
	return python.Install(out)
}

// The configuration files of an Agent Zero v1.7 plugin, beside its plugin.yaml.
const (
	configDefaultName = "default_config.yaml"
	configName        = "config.json"
	configDir         = "config"
)

// pluginConfigs reads the configuration of every v1.7 plugin of the tree (the
// directories in plugins, relative to src, "." for the tree itself): its
// default_config.yaml with its config.json over it (key by key), as JSON, by
// the plugin's directory name (the name get_plugin_config is called with).
func pluginConfigs(src string, plugins, files []string) (map[string][]byte, error) {
	out := map[string][]byte{}
	for _, dir := range plugins {
		name := path.Base(dir)
		if dir == "." {
			name = filepath.Base(filepath.Clean(src))
		}
		cfg := map[string]any{}
		found := false
		for _, fn := range []string{configDefaultName, configName} {
			rel := path.Join(dir, fn)
			if !slices.Contains(files, rel) {
				continue
			}
			p := filepath.Join(src, filepath.FromSlash(rel))
			b, err := os.ReadFile(p)
			if err != nil {
				return nil, fmt.Errorf("reading the plugin configuration %s: %w", p, err)
			}
			var m map[string]any
			if fn == configName {
				err = json.Unmarshal(b, &m)
			} else {
				err = yaml.Unmarshal(b, &m)
			}
			if err != nil {
				return nil, fmt.Errorf("reading the plugin configuration %s: %w; fix it (a mapping of settings) and port the tree again", p, err)
			}
			maps.Copy(cfg, m)
			found = true
		}
		if !found {
			continue
		}
		js, err := json.MarshalIndent(cfg, "", "  ")
		if err != nil {
			return nil, fmt.Errorf("the configuration of plugin %s: %w", dir, err)
		}
		out[name] = append(js, '\n')
	}
	return out, nil
}

// writeConfigs writes each plugin configuration to out/config/<name>.json.
func writeConfigs(out string, configs map[string][]byte) error {
	if len(configs) == 0 {
		return nil
	}
	dir := filepath.Join(out, configDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	for name, js := range configs {
		if err := os.WriteFile(filepath.Join(dir, name+".json"), js, 0o644); err != nil {
			return fmt.Errorf("writing the configuration of plugin %s: %w", name, err)
		}
	}
	return nil
}
