package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/exocortex/exocortex/core/discover"
	"github.com/exocortex/exocortex/core/hooks"
	"github.com/exocortex/exocortex/core/host"
	"github.com/exocortex/exocortex/core/state"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk/python"
	"github.com/exocortex/exocortex/sdk/sdktest"
	"github.com/exocortex/exocortex/signals"
)

var update = flag.Bool("update", false, "rewrite testdata/manifest.golden.json from the Go plugin")

const goldenManifest = "testdata/manifest.golden.json"

// target is a plugin under test: install writes it into a plugin directory (the
// directory the host scans), as the plugin named "conformance".
type target struct {
	name    string
	install func(t *testing.T, pluginsDir string)
}

func goTarget() target {
	return target{name: "go", install: func(t *testing.T, pluginsDir string) {
		bin := sdktest.BuildPlugin(t, "./testdata/goplugin")
		dir := filepath.Join(pluginsDir, "conformance")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		// A subdirectory holding an executable of its own name is a plugin.
		if err := os.Rename(bin, filepath.Join(dir, "conformance")); err != nil {
			t.Fatal(err)
		}
	}}
}

func pythonTarget() target {
	return target{name: "python", install: func(t *testing.T, pluginsDir string) {
		dir := filepath.Join(pluginsDir, "conformance")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		src, err := os.ReadFile("testdata/pyplugin/main.py")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "main.py"), src, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := python.Install(dir); err != nil {
			t.Fatal(err)
		}
		pj, _ := json.Marshal(discover.Manifest{Command: []string{python.Interpreter, "main.py"}})
		if err := os.WriteFile(filepath.Join(dir, "plugin.json"), pj, 0o644); err != nil {
			t.Fatal(err)
		}
	}}
}

// pythonMissing says why the Python half cannot run here, or "".
func pythonMissing() string {
	if runtime.GOOS != "linux" {
		return "the Python plugin is started with Debian's " + python.Interpreter
	}
	out, err := exec.Command(python.Interpreter, "-c", "import grpc, google.protobuf").CombinedOutput()
	if err != nil {
		return fmt.Sprintf("%s cannot import grpc and google.protobuf (%v: %s); install them with "+
			"`apt-get install -y python3-grpcio python3-protobuf`", python.Interpreter, err, bytes.TrimSpace(out))
	}
	return ""
}

func skipWithoutPython(t *testing.T) {
	t.Helper()
	if why := pythonMissing(); why != "" {
		if os.Getenv("EXOCORTEX_CONFORMANCE_PYTHON") == "require" {
			t.Fatalf("the Python half is required (EXOCORTEX_CONFORMANCE_PYTHON=require), but %s", why)
		}
		t.Skipf("skipping the Python half of the conformance suite: %s", why)
	}
}

func TestGoPlugin(t *testing.T) { run(t, goTarget()) }

// TestPluginChecker runs the plugin-agnostic checker (Plugin), which generated
// plugins' tests use too, on the example plugins. (The conformance plugins
// misbehave on purpose in some extensions, so they are not its subject.)
func TestPluginChecker(t *testing.T) {
	for _, pkg := range []string{
		"github.com/exocortex/exocortex/examples/hello",
		"github.com/exocortex/exocortex/examples/statepair/writer",
		"github.com/exocortex/exocortex/examples/statepair/reader",
	} {
		t.Run(filepath.Base(pkg), func(t *testing.T) {
			dir := t.TempDir()
			if err := os.Rename(sdktest.BuildPlugin(t, pkg), filepath.Join(dir, filepath.Base(pkg))); err != nil {
				t.Fatal(err)
			}
			Plugin(t, dir)
		})
	}
}

// recorder is a testing.TB that keeps what the checker reports instead of failing.
type recorder struct {
	testing.TB
	mu     sync.Mutex
	errors []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

func (r *recorder) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	runtime.Goexit()
}

// checkPythonPlugin installs testdata/NAME/main.py as the one plugin of a plugin
// directory, with the Python SDK beside it, and returns what the checker
// (Plugin) reports about it.
func checkPythonPlugin(t *testing.T, name string) []string {
	t.Helper()
	skipWithoutPython(t)
	dir := filepath.Join(t.TempDir(), name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(filepath.Join("testdata", name, "main.py"))
	if err != nil {
		t.Fatal(err)
	}
	pj, _ := json.Marshal(discover.Manifest{Command: []string{python.Interpreter, "main.py"}})
	if err := errors.Join(os.WriteFile(filepath.Join(dir, "main.py"), src, 0o644),
		os.WriteFile(filepath.Join(dir, "plugin.json"), pj, 0o644), python.Install(dir)); err != nil {
		t.Fatal(err)
	}
	r := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		Plugin(r, filepath.Dir(dir))
	}()
	<-done
	return r.errors
}

// TestPluginCheckerFindsABadBatch runs the checker on a plugin whose batches go on
// after a result that sets more than state: it must say so.
func TestPluginCheckerFindsABadBatch(t *testing.T) {
	errs := checkPythonPlugin(t, "badbatch")
	want := "speaker at message_loop_end, in a batch: the result sets more than state"
	if len(errs) != 1 || !strings.Contains(errs[0], want) || !strings.Contains(errs[0], "yet the batch went on to listener") {
		t.Errorf("the checker reported %q, want one error saying %q", errs, want)
	}
}

// TestPluginCheckerFindsABadDispatch runs the checker on a plugin whose Dispatch
// stream answers each batch with the answer to the one before, and ends with an
// error when the host closes its side: it must say so, and nothing else (its
// RunBatch is right).
func TestPluginCheckerFindsABadDispatch(t *testing.T) {
	errs := checkPythonPlugin(t, "baddispatch")
	want := []string{
		"conformance: Dispatch: a batch of 1 extensions at message_loop_start answered 0 results",
		"conformance: Dispatch: ticker at message_loop_end: result message_loop_start:{",
		"conformance: Dispatch: after the host closed its side: <nil>, rpc error: code = Internal desc = the stream broke",
		// Answered with the answer to the batch before it, an empty one.
		"conformance: Dispatch: a batch without its hook's request: , <nil>; want the stream to end with InvalidArgument",
	}
	ok := len(errs) == len(want)
	for i := 0; ok && i < len(want); i++ {
		ok = strings.HasPrefix(errs[i], want[i])
	}
	if !ok {
		t.Errorf("the checker reported\n%s\nwant errors beginning\n%s", strings.Join(errs, "\n"), strings.Join(want, "\n"))
	}
}

func TestPythonPlugin(t *testing.T) {
	skipWithoutPython(t)
	run(t, pythonTarget())
}

// TestPythonSDKUnitTests runs the Python SDK's own unit tests (sdk/python/tests).
func TestPythonSDKUnitTests(t *testing.T) {
	skipWithoutPython(t)
	cmd := exec.Command(python.Interpreter, "-B", "-m", "unittest", "discover", "-s", "tests")
	cmd.Dir = "../python"
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("python unit tests failed: %v\n%s", err, out)
	}
	t.Logf("%s", bytes.TrimSpace(out[max(0, bytes.LastIndex(out, []byte("\nRan "))):]))
}

// suite is one run against one plugin.
type suite struct {
	h       *host.Host
	p       *host.Plugin
	dir     string
	store   *state.Store
	log     *sdktest.Buffer // the plugins' log, as the host writes it
	stdlog  *sdktest.Buffer // go-plugin's own complaints (package log)
	session string
}

// stdLogMu serialises the tests that redirect package log's output.
var stdLogMu sync.Mutex

func run(t *testing.T, tg target) {
	dir := t.TempDir()
	tg.install(t, dir)

	stdLogMu.Lock()
	stdlog := &sdktest.Buffer{}
	log.SetOutput(io.MultiWriter(os.Stderr, stdlog))
	t.Cleanup(func() {
		log.SetOutput(os.Stderr)
		stdLogMu.Unlock()
	})

	pluginLog := &sdktest.Buffer{}
	h, err := host.New(t.Context(), host.Options{
		Dirs:           []discover.Dir{{Path: dir, Source: discover.User}},
		PluginLog:      pluginLog,
		StartTimeout:   20 * time.Second,
		DefaultTimeout: 10 * time.Second,
	})
	if err != nil {
		t.Fatalf("%s plugin: %v\nplugin log:\n%s", tg.name, err, pluginLog)
	}
	t.Cleanup(h.Close)
	if failed := h.FailedPlugins(); len(failed) > 0 {
		t.Fatalf("%s plugin failed to load: %v\nplugin log:\n%s", tg.name, failed[0], pluginLog)
	}
	if n := len(h.Plugins()); n != 1 {
		t.Fatalf("the host found %d plugins in %s, want 1", n, dir)
	}
	s := &suite{h: h, p: h.Plugins()[0], dir: dir, store: state.NewStore(h.Registry()), log: pluginLog,
		stdlog: stdlog, session: "conformance-" + tg.name}

	t.Run("manifest", s.testManifest)
	t.Run("protocol", s.testProtocol)
	t.Run("hooks", s.testHooks)
	t.Run("state", s.testState)
	t.Run("signals", s.testSignals)
	t.Run("errors", s.testErrors)
	t.Run("readonly", s.testReadOnly)
	t.Run("batches", s.testBatches)
	t.Run("dispatch", s.testDispatch)
	t.Run("tools", s.testTools)
	t.Run("logs", s.testLogs)
	t.Run("timeout", s.testTimeout)
	t.Run("orphan", s.testOrphan)
	if t.Failed() {
		lines := strings.Split(pluginLog.String(), "\n")
		t.Logf("the last lines of the plugin log:\n%s", strings.Join(lines[max(0, len(lines)-40):], "\n"))
	}
}

// ext returns the loaded extension name at hook.
func (s *suite) ext(t *testing.T, hook exocortexv1.Hook, name string) *host.Extension {
	t.Helper()
	for _, e := range s.h.Extensions(hook) {
		if e.Name() == name {
			return e
		}
	}
	t.Fatalf("no extension %s at %s", name, hooks.Name(hook))
	return nil
}

// hookCall builds the HookCall the loop would send ext: the context, and the values
// of the keys ext reads from the store.
func (s *suite) hookCall(ext *host.Extension, messageID string) *exocortexv1.HookCall {
	return &exocortexv1.HookCall{
		Extension: ext.Name(),
		Context: &exocortexv1.Context{
			ContextId:    fmt.Sprintf("ctx-%d", time.Now().UnixNano()),
			SessionId:    s.session,
			MessageId:    messageID,
			RequestId:    "req-1",
			TimestampUtc: time.Now().UTC().Format(time.RFC3339),
			SourceEntity: &exocortexv1.SourceEntity{Id: "operator", Type: "user"},
			Hook:         ext.Hook.Name,
		},
		State: s.store.Read(ext.Access),
	}
}

// code is the gRPC status code of a failed host call.
func code(err error) codes.Code {
	var ce *host.CallError
	if errors.As(err, &ce) {
		return status.Code(ce.Err)
	}
	return status.Code(err)
}

// wantRefusal checks a failed call's kind, code and message.
func wantRefusal(t *testing.T, err error, kind host.FailureKind, c codes.Code, substrings ...string) {
	t.Helper()
	var ce *host.CallError
	if !errors.As(err, &ce) {
		t.Fatalf("got %v, want a *host.CallError (%s, %s)", err, kind, c)
	}
	if ce.Kind != kind || code(err) != c {
		t.Fatalf("got %s/%s: %v; want %s/%s", ce.Kind, code(err), err, kind, c)
	}
	for _, sub := range substrings {
		if !strings.Contains(err.Error(), sub) {
			t.Errorf("error %q does not mention %q", err, sub)
		}
	}
}

// stableJSON renders a message as indented JSON with sorted keys (protojson alone
// varies its spacing on purpose).
func stableJSON(t *testing.T, m proto.Message) []byte {
	t.Helper()
	b, err := protojson.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	out, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(out, '\n')
}

func (s *suite) testManifest(t *testing.T) {
	got := s.p.Manifest()
	if *update && strings.HasSuffix(t.Name(), "TestGoPlugin/manifest") {
		if err := os.WriteFile(goldenManifest, stableJSON(t, got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	raw, err := os.ReadFile(goldenManifest)
	if err != nil {
		t.Fatalf("%v (run go test ./sdk/conformance -update to write it)", err)
	}
	want := &exocortexv1.ManifestResponse{}
	if err := protojson.Unmarshal(raw, want); err != nil {
		t.Fatalf("%s: %v", goldenManifest, err)
	}
	if !proto.Equal(got, want) {
		t.Errorf("manifest differs from %s:\n got %s\nwant %s", goldenManifest, stableJSON(t, got), raw)
	}

	// The host wired it: every hook has echo, in integer order with the others.
	for _, info := range hooks.All() {
		var names []string
		for _, e := range s.h.Extensions(info.Hook) {
			names = append(names, fmt.Sprintf("%s@%d", e.Name(), e.Spec.GetOrder()))
		}
		wantEcho := "echo@10"
		if info.Hook == exocortexv1.Hook_HOOK_SYSTEM_PROMPT {
			wantEcho = "echo@15"
		}
		if len(names) == 0 || names[0] != wantEcho {
			t.Errorf("%s: extensions %v, want %s first", info.Name, names, wantEcho)
		}
	}
	if got := strings.Join(namesAt(s.h, exocortexv1.Hook_HOOK_MESSAGE_LOOP_END), ","); got != "echo,nosy,repeat_watch,fragile,relay_a,relay_b,relay_c,porter" {
		t.Errorf("message_loop_end runs %s", got)
	}
	var tools []string
	for _, tl := range s.h.Tools() {
		tools = append(tools, tl.Spec.GetName())
	}
	if strings.Join(tools, ",") != "delegate,failing,panicky,shout,stateful" {
		t.Errorf("tools %v", tools)
	}
	if d, ok := s.h.Registry().Lookup("conformance_seen"); !ok || d.Type != "google.protobuf.StringValue" || d.Scope != exocortexv1.Scope_SCOPE_SESSION {
		t.Errorf("the plugin key conformance_seen is not declared as a session StringValue: %+v", d)
	}
}

func namesAt(h *host.Host, hook exocortexv1.Hook) []string {
	var out []string
	for _, e := range h.Extensions(hook) {
		out = append(out, e.Name())
	}
	return out
}

// hookCase calls echo at one hook and checks the hook's own response fields.
type hookCase struct {
	hook  exocortexv1.Hook
	call  func(ctx context.Context, ext *host.Extension, hc *exocortexv1.HookCall) (proto.Message, error)
	check func(t *testing.T, resp proto.Message)
}

// invoke runs one hook RPC through the host, returning an untyped response (nil on
// error).
func invoke[Req, Resp proto.Message](ctx context.Context, ext *host.Extension, req Req, rpc host.RPC[Req, Resp]) (proto.Message, error) {
	resp, err := host.Call(ctx, ext, req, rpc)
	if err != nil {
		return nil, err
	}
	return resp, nil
}

func blockOf(t *testing.T, blocks []*exocortexv1.PromptBlock, want string) {
	t.Helper()
	if len(blocks) != 1 || blocks[0].GetTitle() != "ECHO" || blocks[0].GetContent() != want {
		t.Errorf("prompt blocks %v, want one ECHO block %q", blocks, want)
	}
}

func msgs(n int) []*exocortexv1.Message {
	out := make([]*exocortexv1.Message, n)
	for i := range out {
		out[i] = &exocortexv1.Message{Id: fmt.Sprintf("m%d", i), Role: "user", Content: "x"}
	}
	return out
}

func hookCases() []hookCase {
	return []hookCase{
		{exocortexv1.Hook_HOOK_AGENT_INIT,
			func(ctx context.Context, e *host.Extension, hc *exocortexv1.HookCall) (proto.Message, error) {
				return invoke(ctx, e, &exocortexv1.AgentInitRequest{Call: hc}, exocortexv1.PluginClient.AgentInit)
			}, nil},
		{exocortexv1.Hook_HOOK_MONOLOGUE_START,
			func(ctx context.Context, e *host.Extension, hc *exocortexv1.HookCall) (proto.Message, error) {
				return invoke(ctx, e, &exocortexv1.MonologueStartRequest{Call: hc, UserMessage: &exocortexv1.Message{Content: "hello"}},
					exocortexv1.PluginClient.MonologueStart)
			}, nil},
		{exocortexv1.Hook_HOOK_HIST_ADD_BEFORE,
			func(ctx context.Context, e *host.Extension, hc *exocortexv1.HookCall) (proto.Message, error) {
				return invoke(ctx, e, &exocortexv1.HistAddBeforeRequest{Call: hc, Message: &exocortexv1.Message{Role: "user", Content: "hi"}},
					exocortexv1.PluginClient.HistAddBefore)
			},
			func(t *testing.T, r proto.Message) {
				if c := r.(*exocortexv1.HistAddBeforeResponse).Content; c == nil || *c != "echo:hi" {
					t.Errorf("content %v, want echo:hi", c)
				}
			}},
		{exocortexv1.Hook_HOOK_MESSAGE_LOOP_START,
			func(ctx context.Context, e *host.Extension, hc *exocortexv1.HookCall) (proto.Message, error) {
				return invoke(ctx, e, &exocortexv1.MessageLoopStartRequest{Call: hc, Iteration: 2}, exocortexv1.PluginClient.MessageLoopStart)
			}, nil},
		{exocortexv1.Hook_HOOK_MESSAGE_LOOP_PROMPTS_BEFORE,
			func(ctx context.Context, e *host.Extension, hc *exocortexv1.HookCall) (proto.Message, error) {
				return invoke(ctx, e, &exocortexv1.MessageLoopPromptsBeforeRequest{Call: hc, Iteration: 2, History: msgs(2)},
					exocortexv1.PluginClient.MessageLoopPromptsBefore)
			},
			func(t *testing.T, r proto.Message) {
				blockOf(t, r.(*exocortexv1.MessageLoopPromptsBeforeResponse).GetPromptBlocks(), "before 2 2")
			}},
		{exocortexv1.Hook_HOOK_SYSTEM_PROMPT,
			func(ctx context.Context, e *host.Extension, hc *exocortexv1.HookCall) (proto.Message, error) {
				return invoke(ctx, e, &exocortexv1.SystemPromptRequest{Call: hc, SystemPrompt: "You help.",
					Tools: []*exocortexv1.ToolSpec{{Name: "a"}, {Name: "b"}}}, exocortexv1.PluginClient.SystemPrompt)
			},
			func(t *testing.T, r proto.Message) {
				blockOf(t, r.(*exocortexv1.SystemPromptResponse).GetPromptBlocks(), "system You help. [a,b]")
			}},
		{exocortexv1.Hook_HOOK_MESSAGE_LOOP_PROMPTS_AFTER,
			func(ctx context.Context, e *host.Extension, hc *exocortexv1.HookCall) (proto.Message, error) {
				return invoke(ctx, e, &exocortexv1.MessageLoopPromptsAfterRequest{Call: hc, Iteration: 3, History: msgs(1),
					Extras: []*exocortexv1.PromptBlock{{Title: "X"}}, NumCtx: 8192, PromptTokens: 1000},
					exocortexv1.PluginClient.MessageLoopPromptsAfter)
			},
			func(t *testing.T, r proto.Message) {
				blockOf(t, r.(*exocortexv1.MessageLoopPromptsAfterResponse).GetPromptBlocks(), "after 3 1 1000/8192")
			}},
		{exocortexv1.Hook_HOOK_BEFORE_MAIN_LLM_CALL,
			func(ctx context.Context, e *host.Extension, hc *exocortexv1.HookCall) (proto.Message, error) {
				return invoke(ctx, e, &exocortexv1.BeforeMainLLMCallRequest{Call: hc, Iteration: 3, Prompt: msgs(3), NumCtx: 8192},
					exocortexv1.PluginClient.BeforeMainLLMCall)
			}, nil},
		{exocortexv1.Hook_HOOK_RESPONSE_STREAM_CHUNK,
			func(ctx context.Context, e *host.Extension, hc *exocortexv1.HookCall) (proto.Message, error) {
				return invoke(ctx, e, &exocortexv1.ResponseStreamChunkRequest{Call: hc, Delta: "lo", Text: "hello"},
					exocortexv1.PluginClient.ResponseStreamChunk)
			},
			func(t *testing.T, r proto.Message) {
				if d := r.(*exocortexv1.ResponseStreamChunkResponse).Display; d == nil || *d != "HELLO|lo" {
					t.Errorf("display %v, want HELLO|lo", d)
				}
			}},
		{exocortexv1.Hook_HOOK_RESPONSE_STREAM_END,
			func(ctx context.Context, e *host.Extension, hc *exocortexv1.HookCall) (proto.Message, error) {
				return invoke(ctx, e, &exocortexv1.ResponseStreamEndRequest{Call: hc, Text: "done"}, exocortexv1.PluginClient.ResponseStreamEnd)
			},
			func(t *testing.T, r proto.Message) {
				if d := r.(*exocortexv1.ResponseStreamEndResponse).Display; d == nil || *d != "end:done" {
					t.Errorf("display %v, want end:done", d)
				}
			}},
		{exocortexv1.Hook_HOOK_ERROR_FORMAT,
			func(ctx context.Context, e *host.Extension, hc *exocortexv1.HookCall) (proto.Message, error) {
				return invoke(ctx, e, &exocortexv1.ErrorFormatRequest{Call: hc, Reply: "{", Error: "no JSON object",
					Signal: signals.Misformat, ToolName: "shell"}, exocortexv1.PluginClient.ErrorFormat)
			},
			func(t *testing.T, r proto.Message) {
				if c := r.(*exocortexv1.ErrorFormatResponse).Correction; c == nil || *c != `fix no JSON object (misformat, tool "shell")` {
					t.Errorf("correction %v", c)
				}
			}},
		{exocortexv1.Hook_HOOK_TOOL_EXECUTE_BEFORE,
			func(ctx context.Context, e *host.Extension, hc *exocortexv1.HookCall) (proto.Message, error) {
				return invoke(ctx, e, &exocortexv1.ToolExecuteBeforeRequest{Call: hc,
					ToolCall: &exocortexv1.ToolCall{Name: "shell", ArgsJson: `{"cmd":"ls"}`}}, exocortexv1.PluginClient.ToolExecuteBefore)
			},
			func(t *testing.T, r proto.Message) {
				resp := r.(*exocortexv1.ToolExecuteBeforeResponse)
				if a := resp.ArgsJson; a == nil || *a != `{"wrapped":{"cmd":"ls"}}` || resp.Block != nil {
					t.Errorf("got %v, want wrapped arguments and no block", resp)
				}
			}},
		{exocortexv1.Hook_HOOK_TOOL_EXECUTE_AFTER,
			func(ctx context.Context, e *host.Extension, hc *exocortexv1.HookCall) (proto.Message, error) {
				return invoke(ctx, e, &exocortexv1.ToolExecuteAfterRequest{Call: hc, ToolCall: &exocortexv1.ToolCall{Name: "shell"},
					Result: &exocortexv1.ToolResult{Content: "out"}}, exocortexv1.PluginClient.ToolExecuteAfter)
			},
			func(t *testing.T, r proto.Message) {
				resp := r.(*exocortexv1.ToolExecuteAfterResponse)
				if c := resp.Content; c == nil || *c != "OUT" || strings.Join(resp.Annotations, "|") != "echo:shell" {
					t.Errorf("got %v", resp)
				}
			}},
		{exocortexv1.Hook_HOOK_MESSAGE_LOOP_END,
			func(ctx context.Context, e *host.Extension, hc *exocortexv1.HookCall) (proto.Message, error) {
				return invoke(ctx, e, &exocortexv1.MessageLoopEndRequest{Call: hc, Iteration: 4, Reply: "hi", Added: msgs(2)},
					exocortexv1.PluginClient.MessageLoopEnd)
			},
			func(t *testing.T, r proto.Message) {
				resp := r.(*exocortexv1.MessageLoopEndResponse)
				if resp.Intervention == nil || *resp.Intervention != "end 4 hi 2" || resp.Stop != nil {
					t.Errorf("got %v", resp)
				}
			}},
		{exocortexv1.Hook_HOOK_MONOLOGUE_END,
			func(ctx context.Context, e *host.Extension, hc *exocortexv1.HookCall) (proto.Message, error) {
				return invoke(ctx, e, &exocortexv1.MonologueEndRequest{Call: hc, FinalResponse: "bye", History: msgs(4)},
					exocortexv1.PluginClient.MonologueEnd)
			},
			func(t *testing.T, r proto.Message) {
				if n := r.(*exocortexv1.MonologueEndResponse).Notices; strings.Join(n, "|") != "final:bye|stop:" {
					t.Errorf("notices %q", n)
				}
			}},
		{exocortexv1.Hook_HOOK_CHAT_MODEL_CALL_BEFORE,
			func(ctx context.Context, e *host.Extension, hc *exocortexv1.HookCall) (proto.Message, error) {
				return invoke(ctx, e, &exocortexv1.ChatModelCallBeforeRequest{Call: hc, Iteration: 3, Model: "m", Prompt: msgs(3), NumCtx: 8192, Tools: []string{"response"}},
					exocortexv1.PluginClient.ChatModelCallBefore)
			}, nil},
		{exocortexv1.Hook_HOOK_CHAT_MODEL_CALL_AFTER,
			func(ctx context.Context, e *host.Extension, hc *exocortexv1.HookCall) (proto.Message, error) {
				return invoke(ctx, e, &exocortexv1.ChatModelCallAfterRequest{Call: hc, Iteration: 3, Model: "m", Response: "{}", Reasoning: "hm"},
					exocortexv1.PluginClient.ChatModelCallAfter)
			},
			func(t *testing.T, r proto.Message) {
				if got := r.(*exocortexv1.ChatModelCallAfterResponse).Response; got == nil || *got != `{} (after m, thought "hm")` {
					t.Errorf("response %v", got)
				}
			}},
		{exocortexv1.Hook_HOOK_UTIL_MODEL_CALL_BEFORE,
			func(ctx context.Context, e *host.Extension, hc *exocortexv1.HookCall) (proto.Message, error) {
				return invoke(ctx, e, &exocortexv1.UtilModelCallBeforeRequest{Call: hc, Purpose: "compress_history", Model: "u", System: "Summarise.", Message: "a: b"},
					exocortexv1.PluginClient.UtilModelCallBefore)
			},
			func(t *testing.T, r proto.Message) {
				resp := r.(*exocortexv1.UtilModelCallBeforeResponse)
				if resp.GetSystem() != "Summarise. Be terse." || resp.GetMessage() != "compress_history: a: b" {
					t.Errorf("got %v", resp)
				}
			}},
		{exocortexv1.Hook_HOOK_UTIL_MODEL_CALL_AFTER,
			func(ctx context.Context, e *host.Extension, hc *exocortexv1.HookCall) (proto.Message, error) {
				return invoke(ctx, e, &exocortexv1.UtilModelCallAfterRequest{Call: hc, Purpose: "compress_history", Response: "- b"},
					exocortexv1.PluginClient.UtilModelCallAfter)
			},
			func(t *testing.T, r proto.Message) {
				if got := r.(*exocortexv1.UtilModelCallAfterResponse).Response; got == nil || *got != "- B" {
					t.Errorf("response %v, want - B", got)
				}
			}},
		{exocortexv1.Hook_HOOK_REASONING_STREAM_CHUNK,
			func(ctx context.Context, e *host.Extension, hc *exocortexv1.HookCall) (proto.Message, error) {
				return invoke(ctx, e, &exocortexv1.ReasoningStreamChunkRequest{Call: hc, Delta: "ink", Text: "I think"},
					exocortexv1.PluginClient.ReasoningStreamChunk)
			},
			func(t *testing.T, r proto.Message) {
				if d := r.(*exocortexv1.ReasoningStreamChunkResponse).Display; d == nil || *d != "***|I think" {
					t.Errorf("display %v, want ***|I think", d)
				}
			}},
		{exocortexv1.Hook_HOOK_REASONING_STREAM,
			func(ctx context.Context, e *host.Extension, hc *exocortexv1.HookCall) (proto.Message, error) {
				return invoke(ctx, e, &exocortexv1.ReasoningStreamRequest{Call: hc, Text: "I think"}, exocortexv1.PluginClient.ReasoningStream)
			}, nil},
		{exocortexv1.Hook_HOOK_REASONING_STREAM_END,
			func(ctx context.Context, e *host.Extension, hc *exocortexv1.HookCall) (proto.Message, error) {
				return invoke(ctx, e, &exocortexv1.ReasoningStreamEndRequest{Call: hc, Text: "so"}, exocortexv1.PluginClient.ReasoningStreamEnd)
			},
			func(t *testing.T, r proto.Message) {
				if d := r.(*exocortexv1.ReasoningStreamEndResponse).Display; d == nil || *d != "thought:so" {
					t.Errorf("display %v, want thought:so", d)
				}
			}},
		{exocortexv1.Hook_HOOK_RESPONSE_STREAM,
			func(ctx context.Context, e *host.Extension, hc *exocortexv1.HookCall) (proto.Message, error) {
				return invoke(ctx, e, &exocortexv1.ResponseStreamRequest{Call: hc, Text: `{"tool_name"`}, exocortexv1.PluginClient.ResponseStream)
			}, nil},
		{exocortexv1.Hook_HOOK_MESSAGE_LOOP_EXCEPTION,
			func(ctx context.Context, e *host.Extension, hc *exocortexv1.HookCall) (proto.Message, error) {
				return invoke(ctx, e, &exocortexv1.MessageLoopExceptionRequest{Call: hc, Iteration: 2, Error: "model m: refused", Stage: "model"},
					exocortexv1.PluginClient.MessageLoopException)
			},
			func(t *testing.T, r proto.Message) {
				if !r.(*exocortexv1.MessageLoopExceptionResponse).GetHandled() {
					t.Error("a model error is not handled")
				}
			}},
		{exocortexv1.Hook_HOOK_PROCESS_CHAIN_END,
			func(ctx context.Context, e *host.Extension, hc *exocortexv1.HookCall) (proto.Message, error) {
				return invoke(ctx, e, &exocortexv1.ProcessChainEndRequest{Call: hc, FinalResponse: "bye", Iterations: 2}, exocortexv1.PluginClient.ProcessChainEnd)
			}, nil},

		{exocortexv1.Hook_HOOK_HIST_ADD_TOOL_RESULT,
			func(ctx context.Context, e *host.Extension, hc *exocortexv1.HookCall) (proto.Message, error) {
				return invoke(ctx, e, &exocortexv1.HistAddToolResultRequest{Call: hc, ToolCall: &exocortexv1.ToolCall{Name: "shell"},
					Result: &exocortexv1.ToolResult{Content: "out"}, Text: "out"}, exocortexv1.PluginClient.HistAddToolResult)
			},
			func(t *testing.T, r proto.Message) {
				if c := r.(*exocortexv1.HistAddToolResultResponse).Text; c == nil || *c != "stored shell: out" {
					t.Errorf("text %v, want stored shell: out", c)
				}
			}},
		{exocortexv1.Hook_HOOK_TOOL_OUTPUT_UPDATE,
			func(ctx context.Context, e *host.Extension, hc *exocortexv1.HookCall) (proto.Message, error) {
				return invoke(ctx, e, &exocortexv1.ToolOutputUpdateRequest{Call: hc, ToolCall: &exocortexv1.ToolCall{Name: "shell"},
					Delta: "b", Output: "ab"}, exocortexv1.PluginClient.ToolOutputUpdate)
			},
			func(t *testing.T, r proto.Message) {
				if d := r.(*exocortexv1.ToolOutputUpdateResponse).Display; d == nil || *d != "b|AB" {
					t.Errorf("display %v, want b|AB", d)
				}
			}},
		{exocortexv1.Hook_HOOK_TEXT_EDITOR_READ_AFTER,
			func(ctx context.Context, e *host.Extension, hc *exocortexv1.HookCall) (proto.Message, error) {
				return invoke(ctx, e, &exocortexv1.TextEditorReadAfterRequest{Call: hc, ToolCall: &exocortexv1.ToolCall{Name: "text_editor"},
					Path: "a.txt", LineFrom: 2, LineTo: 3, Content: "2: b"}, exocortexv1.PluginClient.TextEditorReadAfter)
			},
			func(t *testing.T, r proto.Message) {
				if c := r.(*exocortexv1.TextEditorReadAfterResponse).Content; c == nil || *c != "read a.txt 2-3: 2: b" {
					t.Errorf("content %v", c)
				}
			}},
		{exocortexv1.Hook_HOOK_TEXT_EDITOR_WRITE_BEFORE,
			func(ctx context.Context, e *host.Extension, hc *exocortexv1.HookCall) (proto.Message, error) {
				return invoke(ctx, e, &exocortexv1.TextEditorWriteBeforeRequest{Call: hc, ToolCall: &exocortexv1.ToolCall{Name: "text_editor"},
					Path: "a.txt", Content: "abc"}, exocortexv1.PluginClient.TextEditorWriteBefore)
			},
			func(t *testing.T, r proto.Message) {
				resp := r.(*exocortexv1.TextEditorWriteBeforeResponse)
				if c := resp.Content; c == nil || *c != "ABC" || resp.Refuse != nil {
					t.Errorf("got %v", resp)
				}
			}},
		{exocortexv1.Hook_HOOK_TEXT_EDITOR_WRITE_AFTER,
			func(ctx context.Context, e *host.Extension, hc *exocortexv1.HookCall) (proto.Message, error) {
				return invoke(ctx, e, &exocortexv1.TextEditorWriteAfterRequest{Call: hc, ToolCall: &exocortexv1.ToolCall{Name: "text_editor"},
					Path: "a.txt", Content: "ABC", Result: &exocortexv1.ToolResult{Content: "wrote"}}, exocortexv1.PluginClient.TextEditorWriteAfter)
			}, nil},
		{exocortexv1.Hook_HOOK_TEXT_EDITOR_PATCH_BEFORE,
			func(ctx context.Context, e *host.Extension, hc *exocortexv1.HookCall) (proto.Message, error) {
				return invoke(ctx, e, &exocortexv1.TextEditorPatchBeforeRequest{Call: hc, ToolCall: &exocortexv1.ToolCall{Name: "text_editor"},
					Path: "forbidden.txt", OldText: "a", NewText: "b"}, exocortexv1.PluginClient.TextEditorPatchBefore)
			},
			func(t *testing.T, r proto.Message) {
				resp := r.(*exocortexv1.TextEditorPatchBeforeResponse)
				if f := resp.Refuse; f == nil || *f != "echo refuses forbidden.txt" || resp.NewText != nil {
					t.Errorf("got %v", resp)
				}
			}},
		{exocortexv1.Hook_HOOK_TEXT_EDITOR_PATCH_AFTER,
			func(ctx context.Context, e *host.Extension, hc *exocortexv1.HookCall) (proto.Message, error) {
				return invoke(ctx, e, &exocortexv1.TextEditorPatchAfterRequest{Call: hc, ToolCall: &exocortexv1.ToolCall{Name: "text_editor"},
					Path: "a.txt", OldText: "a", NewText: "B", Result: &exocortexv1.ToolResult{Content: "patched"}}, exocortexv1.PluginClient.TextEditorPatchAfter)
			}, nil},
		{exocortexv1.Hook_HOOK_EMBEDDING_MODEL_CHANGED,
			func(ctx context.Context, e *host.Extension, hc *exocortexv1.HookCall) (proto.Message, error) {
				return invoke(ctx, e, &exocortexv1.EmbeddingModelChangedRequest{Call: hc, OldModel: "glove-100d", NewModel: "nomic-embed-text",
					OldDims: 100, NewDims: 768}, exocortexv1.PluginClient.EmbeddingModelChanged)
			}, nil},
		{exocortexv1.Hook_HOOK_HISTORY_COMPRESS_BEFORE,
			func(ctx context.Context, e *host.Extension, hc *exocortexv1.HookCall) (proto.Message, error) {
				return invoke(ctx, e, &exocortexv1.HistoryCompressBeforeRequest{Call: hc, Trigger: "auto", From: 0, To: 2,
					Leaving: []*exocortexv1.Message{{Role: "user", Content: "a"}, {Role: "assistant", Content: "b"}}}, exocortexv1.PluginClient.HistoryCompressBefore)
			},
			func(t *testing.T, r proto.Message) {
				if k := r.(*exocortexv1.HistoryCompressBeforeResponse).GetKeep(); len(k) != 1 || k[0] != "keep 2 auto" {
					t.Errorf("keep %v, want [keep 2 auto]", k)
				}
			}},
		{exocortexv1.Hook_HOOK_TOOL_APPROVAL_REQUEST,
			func(ctx context.Context, e *host.Extension, hc *exocortexv1.HookCall) (proto.Message, error) {
				return invoke(ctx, e, &exocortexv1.ToolApprovalRequestRequest{Call: hc, ToolCall: &exocortexv1.ToolCall{Name: "forbidden", ArgsJson: "{}"},
					Action: "forbidden {}", Mode: "yolo"}, exocortexv1.PluginClient.ToolApprovalRequest)
			},
			func(t *testing.T, r proto.Message) {
				if f := r.(*exocortexv1.ToolApprovalRequestResponse).Refuse; f == nil || *f != "echo refuses forbidden in yolo" {
					t.Errorf("refuse %v", f)
				}
			}},
		{exocortexv1.Hook_HOOK_OPERATOR_NOTIFICATION,
			func(ctx context.Context, e *host.Extension, hc *exocortexv1.HookCall) (proto.Message, error) {
				return invoke(ctx, e, &exocortexv1.OperatorNotificationRequest{Call: hc, Kind: "permission_prompt", Message: "approve?"}, exocortexv1.PluginClient.OperatorNotification)
			}, nil},
	}
}

type changer interface {
	proto.Message
	GetChanges() *exocortexv1.StateChanges
}

func (s *suite) testHooks(t *testing.T) {
	cases := map[exocortexv1.Hook]hookCase{}
	for _, c := range hookCases() {
		cases[c.hook] = c
	}
	for _, info := range hooks.All() {
		t.Run(info.Name, func(t *testing.T) {
			c, ok := cases[info.Hook]
			if !ok {
				t.Fatalf("the suite has no case for hook %s", info.Name)
			}
			ext := s.ext(t, info.Hook, "echo")
			msgID := "msg-" + info.Name
			resp, err := c.call(t.Context(), ext, s.hookCall(ext, msgID))
			if err != nil {
				t.Fatal(err)
			}
			// Its own response type: what the plugin sent decodes into the hook's
			// response message with no field left over.
			if got := resp.ProtoReflect().Descriptor(); got != info.Response {
				t.Fatalf("response type %s, want %s", got.FullName(), info.Response.FullName())
			}
			if u := resp.ProtoReflect().GetUnknown(); len(u) > 0 {
				t.Errorf("the response carries %d bytes of fields %s does not have", len(u), info.Response.FullName())
			}
			ch := resp.(changer).GetChanges()
			if ch == nil {
				t.Fatal("the response has no changes field")
			}
			if len(ch.GetWrites()) != 1 || ch.GetWrites()[0].GetKey() != "conformance_seen" {
				t.Fatalf("changes %v, want one write of conformance_seen", ch)
			}
			var sv wrapperspb.StringValue
			if err := ch.GetWrites()[0].GetValue().UnmarshalTo(&sv); err != nil || sv.GetValue() != info.Name+":"+msgID {
				t.Errorf("conformance_seen = %q (%v), want %q", sv.GetValue(), err, info.Name+":"+msgID)
			}
			if err := s.store.Apply(ext.Access, ch); err != nil {
				t.Errorf("the host's store refuses the changes: %v", err)
			}
			if c.check != nil {
				c.check(t, resp)
			}
		})
	}

	// The block of tool_execute_before, and the stop of message_loop_end.
	ext := s.ext(t, exocortexv1.Hook_HOOK_TOOL_EXECUTE_BEFORE, "echo")
	before, err := host.Call(t.Context(), ext, &exocortexv1.ToolExecuteBeforeRequest{Call: s.hookCall(ext, "m"),
		ToolCall: &exocortexv1.ToolCall{Name: "forbidden", ArgsJson: "{}"}}, exocortexv1.PluginClient.ToolExecuteBefore)
	if err != nil {
		t.Fatal(err)
	}
	if b := before.GetBlock(); b.GetReason() != "forbidden by echo" || !b.GetNeedsApproval() || b.GetAction() != "forbidden {}" || before.ArgsJson != nil {
		t.Errorf("tool_execute_before of a forbidden tool: %v", before)
	}
	ext = s.ext(t, exocortexv1.Hook_HOOK_MESSAGE_LOOP_END, "echo")
	end, err := host.Call(t.Context(), ext, &exocortexv1.MessageLoopEndRequest{Call: s.hookCall(ext, "m"), Iteration: 1, Reply: "stop"},
		exocortexv1.PluginClient.MessageLoopEnd)
	if err != nil {
		t.Fatal(err)
	}
	if end.GetStop() != "echo was asked to stop" || end.GetIntervention() != "end 1 stop 0" {
		t.Errorf("message_loop_end asked to stop: %v", end)
	}
}

func (s *suite) testState(t *testing.T) {
	store := state.NewStore(s.h.Registry())
	s.store = store
	if err := store.Set("conformance_seen", wrapperspb.String("hello")); err != nil {
		t.Fatal(err)
	}
	counter := s.ext(t, exocortexv1.Hook_HOOK_TOOL_EXECUTE_AFTER, "counter")
	after := func(result *exocortexv1.ToolResult) *exocortexv1.ToolExecuteAfterResponse {
		t.Helper()
		resp, err := host.Call(t.Context(), counter, &exocortexv1.ToolExecuteAfterRequest{Call: s.hookCall(counter, "m"),
			ToolCall: &exocortexv1.ToolCall{Name: "shell"}, Result: result}, exocortexv1.PluginClient.ToolExecuteAfter)
		if err != nil {
			t.Fatal(err)
		}
		if err := store.Apply(counter.Access, resp.GetChanges()); err != nil {
			t.Fatalf("the host's store refuses the changes: %v", err)
		}
		return resp
	}
	failures := func() map[string]int32 {
		t.Helper()
		a, ok := store.Get("failure_tracker")
		if !ok {
			return nil
		}
		var ft exocortexv1.FailureTracker
		if err := a.UnmarshalTo(&ft); err != nil {
			t.Fatal(err)
		}
		return ft.GetFailures()
	}

	// Nothing stored yet but the plugin key, which it reads.
	resp := after(&exocortexv1.ToolResult{Error: "exit status 1"})
	if got := strings.Join(resp.GetAnnotations(), " "); got != "failures=1 seen=hello" {
		t.Errorf("first failure: annotations %q", got)
	}
	if f := failures(); f["shell"] != 1 {
		t.Errorf("first failure: stored %v", f)
	}
	// What was written comes back; loop_active, handed in, is reset.
	if err := store.Set("loop_active", &exocortexv1.LoopActive{Active: true, SinceIteration: 2}); err != nil {
		t.Fatal(err)
	}
	resp = after(&exocortexv1.ToolResult{Error: "exit status 1"})
	if got := strings.Join(resp.GetAnnotations(), " "); got != "failures=2 seen=hello" || strings.Join(resp.GetChanges().GetResets(), ",") != "loop_active" {
		t.Errorf("second failure: %v", resp)
	}
	if _, ok := store.Get("loop_active"); ok {
		t.Error("loop_active is still stored after the reset")
	}
	resp = after(&exocortexv1.ToolResult{Content: "ok"})
	if f := failures(); len(f) != 0 || resp.GetAnnotations()[0] != "failures=0" {
		t.Errorf("a success did not clear the count: stored %v, %v", f, resp)
	}

	// Undeclared accesses are refused by the SDK, naming extension and key.
	nosy := s.ext(t, exocortexv1.Hook_HOOK_MESSAGE_LOOP_END, "nosy")
	for _, tc := range []struct{ reply, want string }{
		{"read", `read of state key "failure_tracker"`},
		{"write", `write of state key "failure_tracker"`},
		{"reset", `write of state key "loop_active"`},
	} {
		_, err := host.Call(t.Context(), nosy, &exocortexv1.MessageLoopEndRequest{Call: s.hookCall(nosy, "m"), Reply: tc.reply},
			exocortexv1.PluginClient.MessageLoopEnd)
		wantRefusal(t, err, host.Returned, codes.FailedPrecondition, `extension "nosy"`, tc.want)
	}
	resp2, err := host.Call(t.Context(), nosy, &exocortexv1.MessageLoopEndRequest{Call: s.hookCall(nosy, "m")}, exocortexv1.PluginClient.MessageLoopEnd)
	if err != nil || resp2.GetIntervention() != "nosy did nothing wrong" {
		t.Errorf("nosy, touching nothing: %v, %v", resp2, err)
	}

	// A value of another type under a key is refused, naming both.
	hc := s.hookCall(counter, "m")
	la := &exocortexv1.StateEntry{Key: "failure_tracker"}
	la.Value, err = anypb.New(&exocortexv1.LoopActive{Active: true})
	if err != nil {
		t.Fatal(err)
	}
	hc.State = append(hc.State, la)
	_, err = host.Call(t.Context(), counter, &exocortexv1.ToolExecuteAfterRequest{Call: hc, ToolCall: &exocortexv1.ToolCall{Name: "shell"},
		Result: &exocortexv1.ToolResult{}}, exocortexv1.PluginClient.ToolExecuteAfter)
	wantRefusal(t, err, host.Returned, codes.FailedPrecondition, `state key "failure_tracker"`, "LoopActive")
}

func (s *suite) testSignals(t *testing.T) {
	rw := s.ext(t, exocortexv1.Hook_HOOK_MESSAGE_LOOP_END, "repeat_watch")
	if got := rw.Spec.GetConsumesSignals(); len(got) != 1 || got[0] != signals.Repeat {
		t.Errorf("repeat_watch consumes %v, want [%s]", got, signals.Repeat)
	}
	call := func(added ...*exocortexv1.Message) *exocortexv1.MessageLoopEndResponse {
		t.Helper()
		resp, err := host.Call(t.Context(), rw, &exocortexv1.MessageLoopEndRequest{Call: s.hookCall(rw, "m"), Added: added},
			exocortexv1.PluginClient.MessageLoopEnd)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	plain := &exocortexv1.Message{Id: "m6", Role: "assistant", Content: "same again"}
	if resp := call(plain); resp.Intervention != nil {
		t.Errorf("no signal, yet an intervention: %q", resp.GetIntervention())
	}
	repeat := &exocortexv1.Message{Id: "m7", Role: "user", Content: "You repeated yourself.", Signal: signals.Repeat}
	if resp := call(plain, repeat); resp.GetIntervention() != "repeat noticed in m7; try another approach" {
		t.Errorf("repeat signal: intervention %q", resp.GetIntervention())
	}
	other := &exocortexv1.Message{Id: "m8", Signal: signals.Misformat}
	if resp := call(other); resp.Intervention != nil {
		t.Errorf("another signal, yet an intervention: %q", resp.GetIntervention())
	}
}

func (s *suite) testErrors(t *testing.T) {
	fragile := s.ext(t, exocortexv1.Hook_HOOK_MESSAGE_LOOP_END, "fragile")
	call := func(e *host.Extension, req *exocortexv1.MessageLoopEndRequest) (*exocortexv1.MessageLoopEndResponse, error) {
		return host.Call(t.Context(), e, req, exocortexv1.PluginClient.MessageLoopEnd)
	}
	_, err := call(fragile, &exocortexv1.MessageLoopEndRequest{Call: s.hookCall(fragile, "m"), Reply: "boom"})
	wantRefusal(t, err, host.Returned, codes.Internal, `extension "fragile"`, "message_loop_end", "fragile was asked to blow up")
	_, err = call(fragile, &exocortexv1.MessageLoopEndRequest{Call: s.hookCall(fragile, "m"), Reply: "fail"})
	wantRefusal(t, err, host.Returned, codes.Unknown, `extension "fragile" at message_loop_end: disk full`)
	_, err = call(fragile, &exocortexv1.MessageLoopEndRequest{Call: s.hookCall(fragile, "m"), Reply: "status"})
	wantRefusal(t, err, host.Returned, codes.ResourceExhausted, "slow down")

	// An extension the plugin does not serve, and a request without its HookCall.
	nobody := &host.Extension{Spec: &exocortexv1.ExtensionSpec{Name: "nobody"}, Plugin: s.p, Hook: fragile.Hook, Timeout: 5 * time.Second}
	_, err = call(nobody, &exocortexv1.MessageLoopEndRequest{Call: &exocortexv1.HookCall{Extension: "nobody"}})
	wantRefusal(t, err, host.Returned, codes.NotFound, `no extension "nobody" at message_loop_end`, "echo, fragile, nosy, porter, relay_a, relay_b, relay_c, repeat_watch")
	_, err = call(fragile, &exocortexv1.MessageLoopEndRequest{})
	wantRefusal(t, err, host.Returned, codes.InvalidArgument, "HookCall")

	// Prompt blocks from an extension that did not declare them.
	ub := s.ext(t, exocortexv1.Hook_HOOK_MESSAGE_LOOP_PROMPTS_AFTER, "undeclared_blocks")
	_, err = host.Call(t.Context(), ub, &exocortexv1.MessageLoopPromptsAfterRequest{Call: s.hookCall(ub, "m")},
		exocortexv1.PluginClient.MessageLoopPromptsAfter)
	wantRefusal(t, err, host.Returned, codes.FailedPrecondition, `extension "undeclared_blocks"`, "prompt blocks")

	// The plugin kept serving, in the same process.
	resp, err := call(fragile, &exocortexv1.MessageLoopEndRequest{Call: s.hookCall(fragile, "m")})
	if err != nil || resp.GetIntervention() != "fragile is fine" {
		t.Fatalf("after the errors: %v, %v", resp, err)
	}
	s.wantHealthy(t, 0)
}

// wantHealthy checks the plugin runs and has been restarted restarts times.
func (s *suite) wantHealthy(t *testing.T, restarts int) {
	t.Helper()
	for _, st := range s.h.Status() {
		if st.State != host.StateRunning || st.Restarts != restarts || st.Crashes != restarts {
			t.Errorf("plugin status: %s, %d restarts, %d crashes (last error %q); want running, %d and %d",
				st.State, st.Restarts, st.Crashes, st.LastError, restarts, restarts)
		}
	}
}

func (s *suite) testTools(t *testing.T) {
	run := func(name, args string) (*exocortexv1.ToolResult, error) {
		t.Helper()
		tool, ok := s.h.Tool(name)
		if !ok {
			tool = &host.Tool{Spec: &exocortexv1.ToolSpec{Name: name}, Plugin: s.p}
		}
		resp, err := s.h.ExecuteTool(t.Context(), tool, &exocortexv1.ExecuteToolRequest{
			Call:     &exocortexv1.HookCall{Context: &exocortexv1.Context{SessionId: s.session}},
			ToolCall: &exocortexv1.ToolCall{Id: "t1", Name: name, ArgsJson: args},
		}, 5*time.Second)
		return resp.GetResult(), err
	}
	if r, err := run("shout", `{"text":"hi"}`); err != nil || r.GetContent() != "HI! ("+s.session+")" || r.GetError() != "" {
		t.Errorf("shout: %v, %v", r, err)
	}
	if r, err := run("shout", ""); err != nil || r.GetContent() != "! ("+s.session+")" {
		t.Errorf("shout without arguments: %v, %v", r, err)
	}
	if r, err := run("failing", "{}"); err != nil || r.GetError() != "exit status 2" || r.GetContent() != "partial output" {
		t.Errorf("failing: %v, %v", r, err)
	}
	_, err := run("shout", "{not json")
	wantRefusal(t, err, host.Returned, codes.InvalidArgument, `tool "shout"`)
	_, err = run("missing", "{}")
	wantRefusal(t, err, host.Returned, codes.NotFound, `no tool "missing"`, "delegate, failing, panicky, shout, stateful")
	_, err = run("stateful", "{}")
	wantRefusal(t, err, host.Returned, codes.FailedPrecondition, `tool "stateful"`, `state key "failure_tracker"`)
	_, err = run("panicky", "{}")
	wantRefusal(t, err, host.Returned, codes.Internal, `tool "panicky"`, "ExecuteTool", "tool bug")

	// The host's services, reached from a tool: refused while no agent runs, then
	// answered.
	if r, err := run("delegate", `{"task":"sum 2+2"}`); err != nil || !strings.Contains(r.GetError(), "the host refused: this host runs no agent") {
		t.Errorf("delegate with no agent: %v, %v", r, err)
	}
	var seen *exocortexv1.RunSubordinateRequest
	var mu sync.Mutex
	s.h.Services().SetSubordinateRunner(func(_ context.Context, req *exocortexv1.RunSubordinateRequest) (*exocortexv1.RunSubordinateResponse, error) {
		mu.Lock()
		seen = req
		mu.Unlock()
		return &exocortexv1.RunSubordinateResponse{Response: "child did: " + req.GetMessage(), Iterations: 2}, nil
	})
	t.Cleanup(func() { s.h.Services().SetSubordinateRunner(nil) })
	if r, err := run("delegate", `{"task":"sum 2+2"}`); err != nil || r.GetContent() != "child did: sum 2+2 (2 iterations)" {
		t.Errorf("delegate: %v, %v", r, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if seen.GetContext().GetSessionId() != s.session {
		t.Errorf("the subordinate was asked with context %v, want the tool call's session", seen.GetContext())
	}
	s.wantHealthy(t, 0)
}

func (s *suite) testLogs(t *testing.T) {
	// The counter's Info record and the panic's Error record reach the host's log at
	// their levels (go-plugin parses the plugin's JSON lines), with their attributes.
	deadline := time.Now().Add(5 * time.Second)
	for {
		logText := s.log.String()
		counted := lineWith(logText, "counted")
		// A record with a multi-line attribute (the stack) spans several lines,
		// in an order that varies: look for its first line, then for the text.
		panicked := lineWith(logText, `extension "fragile"`)
		if counted != "" && panicked != "" {
			if !strings.Contains(counted, "[INFO]") || !strings.Contains(counted, "tool=shell") || !strings.Contains(counted, "extension=counter") {
				t.Errorf("the counter's record: %q", counted)
			}
			if !strings.Contains(panicked, "[ERROR]") {
				t.Errorf("the panic's record: %q", panicked)
			}
			if lineWith(logText, "fragile was asked to blow up") == "" {
				t.Errorf("the panic's record lacks the panic's message")
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the host's log lacks the plugin's records (counted: %q, panic: %q)", counted, panicked)
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, bad := range []string{"[DEBUG]", "[TRACE]", "stdio service not available", "stdio service unavailable"} {
		if strings.Contains(s.log.String(), bad) {
			t.Errorf("the host's log has %q:\n%s", bad, s.log)
		}
	}
	if strings.Contains(s.stdlog.String(), "acceptAndServe error") {
		t.Errorf("go-plugin could not offer the host's services to the plugin:\n%s", s.stdlog)
	}
}

// lineWith returns the first line of the host's log that contains sub, leaving
// out the raw stderr lines the host also keeps (JSON objects).
func lineWith(text, sub string) string {
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, sub) && !strings.HasPrefix(l, "{") {
			return l
		}
	}
	return ""
}

func (s *suite) testTimeout(t *testing.T) {
	sleepy := s.ext(t, exocortexv1.Hook_HOOK_MONOLOGUE_START, "sleepy")
	if sleepy.Timeout != 300*time.Millisecond {
		t.Errorf("sleepy's deadline is %v, want the 300ms its manifest declares", sleepy.Timeout)
	}
	_, err := host.Call(t.Context(), sleepy, &exocortexv1.MonologueStartRequest{Call: s.hookCall(sleepy, "m"),
		UserMessage: &exocortexv1.Message{Content: "sleep"}}, exocortexv1.PluginClient.MonologueStart)
	var ce *host.CallError
	if !errors.As(err, &ce) || ce.Kind != host.TimedOut {
		t.Fatalf("got %v, want a timeout", err)
	}
	// The next call starts the plugin again.
	echo := s.ext(t, exocortexv1.Hook_HOOK_AGENT_INIT, "echo")
	if _, err := host.Call(t.Context(), echo, &exocortexv1.AgentInitRequest{Call: s.hookCall(echo, "m")}, exocortexv1.PluginClient.AgentInit); err != nil {
		t.Fatalf("after the timeout: %v", err)
	}
	s.wantHealthy(t, 1)
}

// TestHelperHost is the host of the orphan check: started as a child process, it
// starts the plugin and dies without stopping it. It does nothing in an ordinary run.
func TestHelperHost(t *testing.T) {
	spec := os.Getenv("CONFORMANCE_HELPER_HOST")
	if spec == "" {
		t.Skip("helper process for the orphan check")
	}
	var c discover.Candidate
	if err := json.Unmarshal([]byte(spec), &c); err != nil {
		t.Fatal(err)
	}
	pid, err := startBare(c, io.Discard)
	if err != nil {
		fmt.Println("ERROR", err)
		os.Exit(2)
	}
	fmt.Printf("PLUGIN_PID %d\n", pid)
	os.Exit(0) // die without stopping the plugin, as a crashed host would
}

func (s *suite) testOrphan(t *testing.T) {
	c := discover.Scan([]discover.Dir{{Path: s.dir, Source: discover.User}}).Plugins[0]
	spec, _ := json.Marshal(c)
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperHost$")
	cmd.Env = append(os.Environ(), "CONFORMANCE_HELPER_HOST="+string(spec))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("helper host: %v\n%s", err, out)
	}
	hostDied := time.Now()
	var pid int
	for _, line := range strings.Split(string(out), "\n") {
		if rest, ok := strings.CutPrefix(line, "PLUGIN_PID "); ok {
			fmt.Sscan(rest, &pid)
		}
	}
	if pid == 0 {
		t.Fatalf("the helper host printed no plugin pid:\n%s", out)
	}
	t.Cleanup(func() { killIfRunning(pid) })
	for processRunning(pid) {
		if time.Since(hostDied) > 5*time.Second {
			t.Fatalf("plugin %d still runs %v after its host died", pid, time.Since(hostDied))
		}
		time.Sleep(25 * time.Millisecond)
	}
	t.Logf("the plugin exited %v after its host", time.Since(hostDied).Round(time.Millisecond))
}
