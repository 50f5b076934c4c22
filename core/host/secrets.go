package host

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/secrets"
)

// The host's half of the secrets (package secrets, docs/secrets.md): every
// request to a plugin and every answer from one passes call or Dispatch, and
// both mask it there, so no extension sees a value and none can hand one on;
// ExecuteTool is the one request that may carry values, put in by
// substituteTool for the secrets the tool declares (ToolSpec.uses_secrets).

// Secrets is the operator's secret store (nil when none are configured).
func (h *Host) Secrets() *secrets.Store { return h.opts.Secrets }

// masker is the secrets' masker for plugin traffic (nil: nothing to mask).
func (p *Plugin) masker() *secrets.Masker { return p.h.opts.Secrets.Masker() }

// maskReq masks a request or an answer crossing the process boundary.
func maskReq[M proto.Message](p *Plugin, m M) M { return secrets.MaskProto(p.masker(), m) }

// substituteTool puts the values of the secrets the tool declares in place of
// their placeholders in the arguments (in a copy: the call the loop keeps,
// shows and stores still has the placeholders). A placeholder naming no
// secret, or one the tool did not declare, fails the call with an error the
// model reads, naming the secrets it may use and never a value.
func (h *Host) substituteTool(t *Tool, req *exocortexv1.ExecuteToolRequest) (*exocortexv1.ExecuteToolRequest, error) {
	args := req.GetToolCall().GetArgsJson()
	if !strings.Contains(args, "§§secret(") {
		return req, nil
	}
	out, changed, err := h.opts.Secrets.SubstituteJSON(args, t.Spec.GetName(), t.Spec.GetUsesSecrets())
	if err != nil {
		return nil, fmt.Errorf("tool %s: %w", t.Spec.GetName(), err)
	}
	if !changed {
		return req, nil
	}
	c := proto.Clone(req).(*exocortexv1.ExecuteToolRequest)
	c.ToolCall.ArgsJson = out
	return c, nil
}

// pluginEnviron is the host's environment less the variables secrets and
// secret settings are read from: a plugin gets a value only through a tool
// call that declares it, or from GetSettingSecret.
func (h *Host) pluginEnviron() []string {
	env := os.Environ()
	s := h.opts.Secrets
	if s == nil {
		return env
	}
	hidden := map[string]bool{}
	for _, k := range s.HiddenEnv() {
		hidden[k] = true
	}
	out := env[:0:0]
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if !hidden[k] {
			out = append(out, kv)
		}
	}
	return out
}

// GetSettingSecret hands the plugin the value of a secret setting of
// config.yaml it declares (ManifestResponse.setting_secrets), from the
// secrets' store (secrets.LoadOptions.Settings), whose masker masks the value
// in everything else that crosses the host. A key the manifest does not list
// is refused naming the declaration; a key that is no secret setting, naming
// the ones there are.
func (ps *pluginServices) GetSettingSecret(_ context.Context, req *exocortexv1.GetSettingSecretRequest) (*exocortexv1.GetSettingSecretResponse, error) {
	key := req.GetKey()
	if !slices.Contains(ps.p.Manifest().GetSettingSecrets(), key) {
		return nil, status.Errorf(codes.PermissionDenied, "plugin %s asked for the secret setting %q, but its manifest does not declare it in setting_secrets: "+
			"declare it (Go: sdk.Plugin{SettingSecrets: []string{%q}})", ps.p.Name(), key, key)
	}
	ps.mu.RLock()
	h := ps.Services.host
	ps.mu.RUnlock()
	var store *secrets.Store
	if h != nil {
		store = h.opts.Secrets
	}
	v, ok := store.Setting(key)
	if !ok && store != nil {
		return nil, status.Errorf(codes.NotFound, "%q is not a secret setting of config.yaml (the secret settings are: %s)", key, strings.Join(store.SettingKeys(), ", "))
	}
	return &exocortexv1.GetSettingSecretResponse{Value: v, Set: v != ""}, nil
}
