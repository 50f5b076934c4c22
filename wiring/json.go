package wiring

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/exocortex/exocortex/core/state"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/signals"
)

// jsonModel is the JSON form of a Model. Manifests are protojson, so a fixture
// reads like what a plugin answers.
type jsonModel struct {
	Plugins []struct {
		Name       string          `json:"name"`
		Path       string          `json:"path"`
		Dir        string          `json:"dir"`
		Priority   int             `json:"priority"`
		Manifest   json.RawMessage `json:"manifest"`
		LoadError  string          `json:"load_error"`
		StderrTail string          `json:"stderr_tail"`
	} `json:"plugins"`
	// BuiltinKeys, when absent, are the keys of state.proto.
	BuiltinKeys *[]json.RawMessage `json:"builtin_keys"`
	Prompts     []struct {
		File        string `json:"file"`
		Source      string `json:"source"`
		Builtin     bool   `json:"builtin"`
		Signal      string `json:"signal"`
		Description string `json:"description"`
		Error       string `json:"error"`
	} `json:"prompts"`
	Signals []struct {
		Name        string `json:"name"`
		Value       string `json:"value"`
		PromptFile  string `json:"prompt_file"`
		Description string `json:"description"`
	} `json:"signals"`
	CoreTools []string  `json:"core_tools"`
	Disabled  []string  `json:"disabled"`
	Enabled   []string  `json:"enabled"`
	Services  *Services `json:"services"`
}

// DecodeModel reads a Model from its JSON form:
//
//	{"plugins": [{"name": "recall", "priority": 0, "manifest": {…protojson…},
//	              "load_error": "", "stderr_tail": ""}],
//	 "builtin_keys": [{…StateKeySpec protojson…}],
//	 "prompts": [{"file": "fw.msg_repeat.md", "source": "…", "builtin": true,
//	              "signal": "repeat", "description": "…", "error": ""}],
//	 "signals": [{"name": "Repeat", "value": "repeat", "prompt_file": "prompts/fw.msg_repeat.md", "description": "…"}],
//	 "core_tools": ["response"], "disabled": ["x"], "enabled": ["y"],
//	 "services": {"ollama": "…", "data_dir": "…"}}
//
// Absent builtin_keys mean the keys of state.proto (what every real run has) and
// absent services DefaultServices; prompts and signals are exactly as listed. It lets manifests be checked
// and rendered without starting plugin processes (fixtures, tests, benchmarks).
func DecodeModel(data []byte) (Model, error) {
	var j jsonModel
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&j); err != nil {
		return Model{}, fmt.Errorf("wiring model: %w", err)
	}
	var m Model
	var errs []error
	for i, p := range j.Plugins {
		pl := Plugin{Name: p.Name, Path: p.Path, Dir: p.Dir, Priority: p.Priority, StderrTail: p.StderrTail}
		if p.LoadError != "" {
			pl.LoadError = errors.New(p.LoadError)
		}
		if len(p.Manifest) > 0 && string(p.Manifest) != "null" {
			pl.Manifest = &exocortexv1.ManifestResponse{}
			if err := protojson.Unmarshal(p.Manifest, pl.Manifest); err != nil {
				errs = append(errs, fmt.Errorf("plugins[%d] (%s): manifest: %w", i, p.Name, err))
			}
		}
		m.Plugins = append(m.Plugins, pl)
	}
	if j.BuiltinKeys == nil {
		m.BuiltinKeys = state.Builtin()
	} else {
		for i, raw := range *j.BuiltinKeys {
			var ks exocortexv1.StateKeySpec
			if err := protojson.Unmarshal(raw, &ks); err != nil {
				errs = append(errs, fmt.Errorf("builtin_keys[%d]: %w", i, err))
				continue
			}
			d := state.FromSpec("proto", &ks)
			m.BuiltinKeys = append(m.BuiltinKeys, d)
		}
	}
	for _, p := range j.Prompts {
		pr := Prompt{File: p.File, Source: p.Source, Builtin: p.Builtin, Signal: p.Signal, Description: p.Description}
		if pr.Source == "" {
			pr.Source = pr.File
		}
		if p.Error != "" {
			pr.Err = errors.New(p.Error)
		}
		m.Prompts = append(m.Prompts, pr)
	}
	for _, s := range j.Signals {
		m.Signals = append(m.Signals, signals.Info{Name: s.Name, Value: s.Value, PromptFile: s.PromptFile, Description: s.Description})
	}
	m.CoreTools = j.CoreTools
	m.Disabled = set(j.Disabled)
	m.Enabled = set(j.Enabled)
	m.Services = DefaultServices()
	if j.Services != nil {
		m.Services = *j.Services
	}
	return m, errors.Join(errs...)
}

func set(names []string) map[string]bool {
	if len(names) == 0 {
		return nil
	}
	out := make(map[string]bool, len(names))
	for _, n := range names {
		out[n] = true
	}
	return out
}
