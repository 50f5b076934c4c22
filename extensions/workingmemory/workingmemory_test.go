package workingmemory

import (
	"fmt"
	"testing"

	"github.com/exocortex/exocortex/extensions/internal/textfacts"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
	"github.com/exocortex/exocortex/sdk/sdktest"
)

func TestThroughProtocol(t *testing.T) {
	client := sdktest.Serve(t, sdk.Plugin{Name: "cognition", Extensions: []sdk.Extension{Extension{}}})
	add := func(state *exocortexv1.WorkingMemory, m *exocortexv1.Message) *exocortexv1.WorkingMemory {
		t.Helper()
		var entries []*exocortexv1.StateEntry
		if state != nil {
			entries = append(entries, sdktest.State(Key(), state))
		}
		resp, err := client.HistAddBefore(t.Context(), &exocortexv1.HistAddBeforeRequest{Call: sdktest.Call("working_memory", entries...), Message: m})
		if err != nil {
			t.Fatal(err)
		}
		if resp.Content != nil {
			t.Fatal("working_memory changed the message")
		}
		got, _ := sdktest.Written(t, resp.GetChanges(), Key())
		return got
	}
	wm := add(nil, &exocortexv1.Message{Role: "user", Content: "Read config/tools.go and ask Agent Zero about `LoadTools`."})
	if len(wm.GetEntities()) != 3 || wm.GetMessagesSeen() != 1 {
		t.Fatalf("first message: %v", wm)
	}
	wm = add(wm, &exocortexv1.Message{Role: "tool", Content: "config/tools.go: 200 lines"})
	for _, e := range wm.GetEntities() {
		if e.GetText() == "config/tools.go" && (e.GetMentions() != 2 || e.GetLastSeen() != 2 || e.GetLastRole() != "tool") {
			t.Fatalf("re-mentioned entity: %v", e)
		}
	}
	if got := Recent(wm, 1); len(got) != 1 || got[0] != "config/tools.go" {
		t.Fatalf("most recent = %v", got)
	}
	// A core message with a signal is skipped entirely.
	if got := add(wm, &exocortexv1.Message{Role: "user", Signal: "repeat", Content: "LoopDetected in Foo.Bar"}); got != nil {
		t.Fatalf("signal message changed working memory: %v", got)
	}
}

func TestCapacity(t *testing.T) {
	wm := &exocortexv1.WorkingMemory{}
	for i := 0; i < Capacity+10; i++ {
		wm.MessagesSeen++
		Add(wm, []textfacts.Entity{{Text: fmt.Sprintf("file%d.go", i), Kind: textfacts.KindPath}}, "user")
	}
	if len(wm.Entities) != Capacity || wm.Entities[0].GetText() != "file10.go" {
		t.Fatalf("kept %d, oldest %s", len(wm.Entities), wm.Entities[0].GetText())
	}
}
