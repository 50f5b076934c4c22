package sdk

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"google.golang.org/protobuf/types/known/anypb"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
)

// Call is one hook call (or tool call) as the extension sees it: the ACP context, a
// logger that reaches the host's log, and the state the extension declared. Typed
// keys read and write through it (Key.Get, Key.Set, Key.Reset); the SDK puts the
// recorded changes into the response.
//
// A Call is valid only during the method it is passed to. It is safe for use by
// several goroutines the method starts, provided they finish before it returns.
// State changes travel to the host in the method's response, so a Set or Reset
// made after the method returned (from a goroutine it left running) cannot
// reach the host: it is refused and logged with LateStateWrite, which the host
// turns into a warning naming the plugin, the extension and the key.
type Call struct {
	plugin    string
	extension string
	hook      exocortexv1.Hook // HOOK_UNSPECIFIED for a tool call
	context   *exocortexv1.Context
	// logger is built on first use (most calls never log); base and attrs make it.
	logger     *slog.Logger
	baseLogger *slog.Logger
	logAttrs   []any
	// reads and writes are the extension's declared keys; nil for a tool.
	reads, writes map[string]bool
	// tool is the tool's name when the call runs a tool.
	tool string
	// host reaches the host's services (nil outside a served plugin).
	host *hostConn

	mu sync.Mutex
	// state holds the values the host sent, by key.
	state map[string]*anypb.Any
	// order lists keys in the order of their first change; pending holds each
	// key's latest change (nil means reset).
	order   []string
	pending map[string]*anypb.Any
	errs    []error
	// closed is set once the method has returned: later changes are refused.
	closed bool
}

// LateStateWrite is the value of the log attribute EventAttr on the record of a
// state change refused because its call had returned. The host reads the
// plugin's log for it and reports the plugin, extension, hook and key.
const LateStateWrite = "late_state_write"

// EventAttr is the log attribute by which a plugin's log record tells the host
// of an event (LateStateWrite); its other attributes carry the details.
const EventAttr = "exocortex_event"

type access int

const (
	accessRead access = iota
	accessWrite
)

// Context is the ACP context of the call. Never nil.
func (c *Call) Context() *exocortexv1.Context { return c.context }

// Extension is the name of the extension being called (for a tool call, the tool's
// name).
func (c *Call) Extension() string { return c.extension }

// Hook is the hook being run; HOOK_UNSPECIFIED when the call runs a tool.
func (c *Call) Hook() exocortexv1.Hook { return c.hook }

// Logger writes to the host's log (the plugin's stderr, which go-plugin forwards),
// with the extension and hook attached.
func (c *Call) Logger() *slog.Logger {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.logger == nil {
		c.logger = c.baseLogger.With(c.logAttrs...)
	}
	return c.logger
}

// Err reports the state-access errors recorded so far (an undeclared read or write,
// a value that does not decode), joined. When it is non-nil at the end of the
// method, the call fails with it whatever the method returned.
func (c *Call) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return errors.Join(c.errs...)
}

// check refuses an access the extension did not declare, recording the error.
func (c *Call) check(k KeyRef, a access) error {
	info := k.info()
	if info == nil {
		err := fmt.Errorf("%s: a zero sdk.Key was used; build keys with sdk.KeyOf or sdk.NewKey", c.who())
		c.fail(err)
		return err
	}
	var declared map[string]bool
	var field string
	if a == accessRead {
		declared, field = c.reads, "Reads"
	} else {
		declared, field = c.writes, "Writes"
	}
	if c.tool != "" {
		err := fmt.Errorf("tool %q: state key %q: tools have no state access in protocol v1 "+
			"(read and write state from an extension at tool_execute_before or tool_execute_after)", c.tool, info.name)
		c.fail(err)
		return err
	}
	if !declared[info.name] {
		verb := "read"
		if a == accessWrite {
			verb = "write"
		}
		err := fmt.Errorf("extension %q: %s of state key %q, which its Spec does not list in %s",
			c.extension, verb, info.name, field)
		c.fail(err)
		return err
	}
	return nil
}

func (c *Call) who() string {
	if c.tool != "" {
		return fmt.Sprintf("tool %q", c.tool)
	}
	return fmt.Sprintf("extension %q", c.extension)
}

func (c *Call) fail(err error) {
	c.mu.Lock()
	c.errs = append(c.errs, err)
	c.mu.Unlock()
}

// value returns the key's current value: this call's own change if any, else what
// the host sent.
func (c *Call) value(name string) (*anypb.Any, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if a, changed := c.pending[name]; changed {
		return a, a != nil
	}
	a, ok := c.state[name]
	return a, ok
}

// record notes a write (a != nil) or a reset (a == nil); the last change of a key
// wins.
func (c *Call) record(name string, a *anypb.Any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		if c.baseLogger == nil {
			return
		}
		c.baseLogger.Error("a state change after the call returned was refused: state changes travel with the call's response; make them before the method returns (wait for the goroutine), or at the extension's next call",
			EventAttr, LateStateWrite, "plugin", c.plugin, "extension", c.extension, "hook", HookName(c.hook), "key", name)
		return
	}
	if c.pending == nil {
		c.pending = make(map[string]*anypb.Any)
	}
	if _, seen := c.pending[name]; !seen {
		c.order = append(c.order, name)
	}
	c.pending[name] = a
}

// close marks the method returned: later changes are refused (record).
func (c *Call) close() {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
}

// changes builds the StateChanges of the response, in the order keys were first
// changed, and closes the call: what is not in them now never reaches the host.
func (c *Call) changes() *exocortexv1.StateChanges {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	sc := &exocortexv1.StateChanges{}
	for _, name := range c.order {
		if a := c.pending[name]; a != nil {
			sc.Writes = append(sc.Writes, &exocortexv1.StateEntry{Key: name, Value: a})
		} else {
			sc.Resets = append(sc.Resets, name)
		}
	}
	return sc
}
