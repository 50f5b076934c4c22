package host

import (
	"encoding/json"
	"strings"

	"github.com/exocortex/exocortex/protocol"
)

// EventLateStateWrite: an extension changed a state key after its hook call
// had returned (from a goroutine or a background task it left running). State
// changes travel in the call's response, so the SDK refused the change; the
// event names the plugin, the extension, the hook and (Detail) the key.
const EventLateStateWrite = "late_state_write"

// EventCommandHook: a command hook of the bridge (extensions/cmdhooks)
// warned (an exit code other than 0 and 2, a systemMessage, a configuration
// it could not read); Detail says what.
const EventCommandHook = protocol.LogEventCommandHook

// watchLog reads one line of the plugin's stderr for the events its SDK logs
// for the host (protocol.LogEventAttr): an hclog JSON record whose attribute says so.
func (p *Plugin) watchLog(line string) {
	if !strings.HasPrefix(line, "{") || !strings.Contains(line, protocol.LogEventAttr) {
		return // the cheap test first: most lines are ordinary log records
	}
	var rec struct {
		Event     string `json:"exocortex_event"`
		Extension string `json:"extension"`
		Hook      string `json:"hook"`
		Key       string `json:"key"`
		Detail    string `json:"detail"`
	}
	if json.Unmarshal([]byte(line), &rec) != nil {
		return
	}
	switch rec.Event {
	case protocol.LogEventLateStateWrite:
		p.h.emit(Event{Kind: EventLateStateWrite, Plugin: p.Name(), Extension: rec.Extension, Hook: rec.Hook, Detail: rec.Key})
	case protocol.LogEventCommandHook:
		p.h.emit(Event{Kind: EventCommandHook, Plugin: p.Name(), Extension: rec.Extension, Hook: rec.Hook, Detail: rec.Detail})
	}
}
