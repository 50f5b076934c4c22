package host

import (
	"encoding/json"
	"strings"

	"github.com/exocortex/exocortex/sdk"
)

// EventLateStateWrite: an extension changed a state key after its hook call
// had returned (from a goroutine or a background task it left running). State
// changes travel in the call's response, so the SDK refused the change; the
// event names the plugin, the extension, the hook and (Detail) the key.
const EventLateStateWrite = "late_state_write"

// watchLog reads one line of the plugin's stderr for the events its SDK logs
// for the host (sdk.EventAttr): an hclog JSON record whose attribute says so.
func (p *Plugin) watchLog(line string) {
	if !strings.HasPrefix(line, "{") || !strings.Contains(line, sdk.LateStateWrite) {
		return // the cheap test first: most lines are ordinary log records
	}
	var rec struct {
		Event     string `json:"exocortex_event"`
		Extension string `json:"extension"`
		Hook      string `json:"hook"`
		Key       string `json:"key"`
	}
	if json.Unmarshal([]byte(line), &rec) != nil || rec.Event != sdk.LateStateWrite {
		return
	}
	p.h.emit(Event{Kind: EventLateStateWrite, Plugin: p.Name(), Extension: rec.Extension, Hook: rec.Hook, Detail: rec.Key})
}
