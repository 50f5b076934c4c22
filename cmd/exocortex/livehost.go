package main

import (
	"context"

	"github.com/exocortex/exocortex/core/host"
)

// openLiveHost starts the plugins for a host that stays up while an agent
// runs — `exocortex run`, the operator's terminal session (inline and full
// screen) and any long-running host to come — and watches the plugin
// directories, so that a rebuilt plugin (`exocortex dev`), a new one or a
// removed one is vetted and swapped in between iterations (core/host's hot
// reload). onEvent, when set, is told of every host event after the event
// log; the terminal turns the reload events into transcript lines and its
// plugin count. A watcher that cannot start (no inotify watches left) leaves
// the host running without hot reload, with a warning in the log.
func (a *app) openLiveHost(ctx context.Context, onEvent func(host.Event)) (*host.Host, error) {
	opts, err := a.hostOptionsFor(true)
	if err != nil {
		return nil, err
	}
	if onEvent != nil {
		logged := opts.OnEvent
		opts.OnEvent = func(e host.Event) {
			if logged != nil {
				logged(e)
			}
			onEvent(e)
		}
	}
	h, err := host.New(ctx, opts)
	if err != nil {
		return nil, err
	}
	a.warmMemory(ctx, h)
	if err := h.Watch(ctx); err != nil {
		a.log.Warn("plugin hot reload is off", "err", err)
	}
	return h, nil
}
