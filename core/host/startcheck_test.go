package host

import (
	"strings"
	"testing"

	"github.com/exocortex/exocortex/lint"
	"github.com/exocortex/exocortex/prompts"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
)

// TestWiringErrorsKeepPluginsOutAtStart: start applies hot reload's rule. A
// plugin that adds an error finding of the wiring lint is kept out (stopped,
// rejected in Status, named in Notices and FailedPlugins with the finding),
// and a plugin that only worked with it is kept out next; the others run.
// AllowWiringErrors starts them all and still says so.
func TestWiringErrorsKeepPluginsOutAtStart(t *testing.T) {
	keys := func(names ...string) []*exocortexv1.StateKeySpec {
		var out []*exocortexv1.StateKeySpec
		for _, n := range names {
			out = append(out, &exocortexv1.StateKeySpec{Name: n, Type: "google.protobuf.StringValue", Scope: exocortexv1.Scope_SCOPE_SESSION})
		}
		return out
	}
	tests := []struct {
		name      string
		allow     bool
		wantTable string
		wantOut   map[string]string // plugin -> a finding code its notice names
		wantNote  string
	}{
		{name: "kept out", wantTable: "b1", wantOut: map[string]string{"alpha": "EXO031", "gamma": "EXO023"}},
		{name: "allowed", allow: true, wantTable: "a1,b1,g1", wantNote: "started with wiring errors (--allow-wiring-errors)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			// alpha reads a key nobody writes (EXO031) and writes the key
			// gamma reads: once alpha is out, gamma reads a key nobody declares.
			addPlugin(t, dir, "alpha", []ext{{name: "a1", hook: "message_loop_end", order: 10, reads: []string{"alpha_in"}, writes: []string{"alpha_out"}}}, keys("alpha_in", "alpha_out"))
			addPlugin(t, dir, "beta", []ext{{name: "b1", hook: "message_loop_end", order: 20}}, nil)
			addPlugin(t, dir, "gamma", []ext{{name: "g1", hook: "message_loop_end", order: 30, reads: []string{"alpha_out"}}}, nil)
			log := &eventLog{}
			h, err := newHost(t, dir, Options{OnEvent: log.add, WiringCheck: lint.HostCheck(prompts.Embedded()), AllowWiringErrors: tt.allow})
			if err != nil {
				t.Fatal(err)
			}
			if got := endNames(h); got != tt.wantTable {
				t.Fatalf("table = %s, want %s", got, tt.wantTable)
			}
			notices := strings.Join(h.Notices(), "\n")
			if tt.wantNote != "" && !strings.Contains(notices, tt.wantNote) {
				t.Errorf("notices do not say %q:\n%s", tt.wantNote, notices)
			}
			failed := map[string]string{}
			for _, f := range h.FailedPlugins() {
				failed[f.Plugin] = f.Error()
			}
			if len(failed) != len(tt.wantOut) {
				t.Errorf("failed plugins = %v, want %v", failed, tt.wantOut)
			}
			for name, code := range tt.wantOut {
				if !strings.Contains(failed[name], code) {
					t.Errorf("failed[%s] = %q, want it to name %s", name, failed[name], code)
				}
				if !strings.Contains(notices, "plugin "+name+" was kept out") {
					t.Errorf("no notice for %s:\n%s", name, notices)
				}
				st, _ := statusOf(h, name)
				if st.State != StateRejected || !strings.Contains(st.LastError, code) {
					t.Errorf("status of %s = %s %q", name, st.State, st.LastError)
				}
				log.wait(t, EventKeptOut, name)
			}
			if st, _ := statusOf(h, "beta"); st.State != StateRunning {
				t.Errorf("beta is %s", st.State)
			}
		})
	}
}
