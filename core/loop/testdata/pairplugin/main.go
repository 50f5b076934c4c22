// Command pairplugin serves one of two plugins for the test of extensions called
// at once (pairplugin alpha|beta), all at message_loop_end:
//
//	alpha: a1 (order 1) writes pair_note and waits for beta's b2 to start;
//	       a3 (order 3) reads pair_note.
//	beta:  b2 (order 2) is independent of a1, unless PAIR_FILE_DEP is set:
//	       then it reads the data file a1 writes;
//	       b4 (order 4) reads pair_note.
//
// and at message_loop_prompts_after:
//
//	alpha: pa1 (order 1) adds a block and waits for beta's pb2 to start;
//	beta:  pb2 (order 2) does not read the prompt so far, pb3 (order 3) does.
//
// Each records what it saw in a session key. PAIR_DIR is where b2 and pb2 leave
// the files a1 and pa1 wait for (at most PAIR_WAIT, default 1s): those marker
// files are the test's instrument, so the extensions still declare
// EffectsDeclared, which lets the host call them beside another plugin's;
// PAIR_UNDECLARED=1 makes b2 and pb2 not declare it, so they run in order.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"google.golang.org/protobuf/types/known/wrapperspb"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
)

type str = *wrapperspb.StringValue

func key(name string) sdk.Key[str] {
	return sdk.NewKey[str]("pair_"+name, exocortexv1.Scope_SCOPE_SESSION, "what the pair test saw: "+name)
}

func started() string { return marker("b2") }

func marker(name string) string { return filepath.Join(os.Getenv("PAIR_DIR"), name+".started") }

// waitFor waits for the marker of name, at most PAIR_WAIT (default 1s), and
// says whether it came.
func waitFor(name string) string {
	wait, err := time.ParseDuration(os.Getenv("PAIR_WAIT"))
	if err != nil {
		wait = time.Second
	}
	for end := time.Now().Add(wait); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		if _, err := os.Stat(marker(name)); err == nil {
			return "together"
		}
	}
	return "alone"
}

type a1 struct{}

func (e a1) Spec() sdk.Spec {
	return sdk.Spec{Name: "a1", Hooks: []sdk.Hook{sdk.MessageLoopEnd(e)}, Order: 1, Writes: []sdk.KeyRef{key("note"), key("a1")}, EffectsDeclared: true}
}
func (a1) MessageLoopEnd(_ context.Context, c *sdk.Call, _ *exocortexv1.MessageLoopEndRequest) (*exocortexv1.MessageLoopEndResponse, error) {
	key("note").Set(c, wrapperspb.String("from a1"))
	key("a1").Set(c, wrapperspb.String(waitFor("b2")))
	return nil, nil
}

// pa1 adds a prompt block at message_loop_prompts_after, waiting for pb2 first.
type pa1 struct{}

func (e pa1) Spec() sdk.Spec {
	return sdk.Spec{Name: "pa1", Hooks: []sdk.Hook{sdk.MessageLoopPromptsAfter(e)}, Order: 1, InjectsPrompt: true, Writes: []sdk.KeyRef{key("pa1")}, EffectsDeclared: true}
}
func (pa1) MessageLoopPromptsAfter(_ context.Context, c *sdk.Call, _ *exocortexv1.MessageLoopPromptsAfterRequest) (*exocortexv1.MessageLoopPromptsAfterResponse, error) {
	key("pa1").Set(c, wrapperspb.String(waitFor("pb2")))
	return &exocortexv1.MessageLoopPromptsAfterResponse{PromptBlocks: []*exocortexv1.PromptBlock{{Title: "PA1", Content: "from pa1"}}}, nil
}

// extras records how many blocks of the prompt so far it was sent; pb2 does
// not declare reading them (and leaves its marker), pb3 does.
type extras struct {
	name   string
	order  int
	prompt bool
}

func (e extras) Spec() sdk.Spec {
	return sdk.Spec{Name: e.name, Hooks: []sdk.Hook{sdk.MessageLoopPromptsAfter(e)}, Order: e.order, ReadsPrompt: e.prompt, Writes: []sdk.KeyRef{key(e.name)},
		EffectsDeclared: os.Getenv("PAIR_UNDECLARED") == ""}
}
func (e extras) MessageLoopPromptsAfter(_ context.Context, c *sdk.Call, req *exocortexv1.MessageLoopPromptsAfterRequest) (*exocortexv1.MessageLoopPromptsAfterResponse, error) {
	if !e.prompt {
		if err := os.WriteFile(marker(e.name), nil, 0o644); err != nil {
			return nil, err
		}
	}
	key(e.name).Set(c, wrapperspb.String(fmt.Sprintf("extras=%d", len(req.GetExtras()))))
	return nil, nil
}

type reader struct {
	name  string
	order int
}

func (r reader) Spec() sdk.Spec {
	return sdk.Spec{Name: r.name, Hooks: []sdk.Hook{sdk.MessageLoopEnd(r)}, Order: r.order, Reads: []sdk.KeyRef{key("note")}, Writes: []sdk.KeyRef{key(r.name)}, EffectsDeclared: true}
}
func (r reader) MessageLoopEnd(_ context.Context, c *sdk.Call, _ *exocortexv1.MessageLoopEndRequest) (*exocortexv1.MessageLoopEndResponse, error) {
	v, _ := key("note").Get(c)
	key(r.name).Set(c, wrapperspb.String("note="+v.GetValue()))
	return nil, nil
}

type b2 struct{}

func (e b2) Spec() sdk.Spec {
	return sdk.Spec{Name: "b2", Hooks: []sdk.Hook{sdk.MessageLoopEnd(e)}, Order: 2, Writes: []sdk.KeyRef{key("b2")}, EffectsDeclared: os.Getenv("PAIR_UNDECLARED") == ""}
}
func (b2) MessageLoopEnd(_ context.Context, c *sdk.Call, _ *exocortexv1.MessageLoopEndRequest) (*exocortexv1.MessageLoopEndResponse, error) {
	if err := os.WriteFile(started(), nil, 0o644); err != nil {
		return nil, err
	}
	key("b2").Set(c, wrapperspb.String("ran"))
	return nil, nil
}

func tool() sdk.Tool {
	return sdk.Tool{Name: "response", Description: "ends the monologue", Run: func(context.Context, *sdk.Call, json.RawMessage) (*exocortexv1.ToolResult, error) {
		return &exocortexv1.ToolResult{Content: "done", BreakLoop: true}, nil
	}}
}

func main() {
	file := func(access exocortexv1.Access, user string) *exocortexv1.FileSpec {
		return &exocortexv1.FileSpec{Id: "pair_file", Path: "$EXOCORTEX_HOME/pair.txt", Access: access, User: user, Doc: "what a1 writes"}
	}
	switch os.Args[len(os.Args)-1] {
	case "alpha":
		w := sdk.Plugin{Name: "alpha", Extensions: []sdk.Extension{a1{}, reader{"a3", 3}, pa1{}}, Tools: []sdk.Tool{tool()}}
		w.Files = []*exocortexv1.FileSpec{file(exocortexv1.Access_ACCESS_WRITE, "a1")}
		sdk.Serve(w)
	case "beta":
		p := sdk.Plugin{Name: "beta", Extensions: []sdk.Extension{b2{}, reader{"b4", 4}, extras{"pb2", 2, false}, extras{"pb3", 3, true}}}
		if os.Getenv("PAIR_FILE_DEP") != "" {
			p.Files = []*exocortexv1.FileSpec{file(exocortexv1.Access_ACCESS_READ, "b2")}
		}
		sdk.Serve(p)
	}
	os.Exit(2)
}
