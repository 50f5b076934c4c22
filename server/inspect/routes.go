package inspect

import (
	"context"
	"errors"
	"net/http"

	"github.com/exocortex/exocortex/core/host"
	"github.com/exocortex/exocortex/core/session"
	"github.com/exocortex/exocortex/server/route"
)

// Options configure [New].
type Options struct {
	// Dir is the sessions directory ($EXOCORTEX_HOME/sessions).
	Dir string
	// Sessions is where the sessions are (session.NewDirStore(Dir) when
	// nil): a session is inspectable when the store has it, wherever it was
	// written.
	Sessions session.Store
	// Recording finds the recording directory of session name, the one
	// replay.Load reads (nil: Dir/NAME.replay, beside the session file). On
	// a shared store it is a host-local copy of the shared recording,
	// brought up to date (replay.Sync), so that a turn run through another
	// replica is inspected through this one. An error wrapping
	// fs.ErrNotExist is a session with no recorded turn.
	Recording func(ctx context.Context, name string) (string, error)
	// Plugins is the host (nil: no plugin routes, and no plugin health in
	// the wiring).
	Plugins Plugins
	// Busy reports whether a session is mid-turn, so a reload waits for
	// the next step rather than swapping plugins under it (nil: never busy;
	// the host refuses a swap mid-iteration anyway).
	Busy func() bool
}

// Inspect serves the inspection routes.
type Inspect struct {
	opts  Options
	cache cache
}

// New returns the inspection surface.
func New(opts Options) *Inspect { return &Inspect{opts: opts} }

// Routes are the inspection routes.
func (s *Inspect) Routes() []route.Route {
	h := func(f http.HandlerFunc) http.Handler { return f }
	rs := []route.Route{
		{Method: "GET", Pattern: "/api/v1/saw/{session}", Role: route.Agent, Summary: "What the model saw in a turn: each request's prompt, blocks by extension and hook, memories recalled and why", Handler: h(s.saw)},
		{Method: "GET", Pattern: "/api/v1/wiring/{session}", Role: route.Agent, Summary: "A turn's hooks as a timeline, the state keys read and written, signals, failures and each request's budget", Handler: h(s.wiring)},
	}
	if s.opts.Plugins != nil {
		rs = append(rs,
			route.Route{Method: "GET", Pattern: "/api/v1/plugins", Role: route.Agent, Summary: "The plugins' health, extensions with hooks and orders, crashes and last error", Handler: h(s.plugins)},
			route.Route{Method: "GET", Pattern: "/api/v1/plugins/{name}", Role: route.Agent, Summary: "One plugin's status", Handler: h(s.plugin)},
			route.Route{Method: "POST", Pattern: "/api/v1/plugins/{name}/reload", Role: route.Admin, Summary: "Reload a plugin from its file, with the checks a change on disk gets", Handler: h(s.reload)},
		)
	}
	return rs
}

func (s *Inspect) saw(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("session")
	rec, t, err := s.loadTurn(r.Context(), name, r.URL.Query().Get("turn"))
	if err != nil {
		answer(w, err)
		return
	}
	route.JSON(w, http.StatusOK, Saw(name, rec, t))
}

func (s *Inspect) wiring(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("session")
	rec, t, err := s.loadTurn(r.Context(), name, r.URL.Query().Get("turn"))
	if err != nil {
		answer(w, err)
		return
	}
	var status []host.PluginStatus
	if s.opts.Plugins != nil {
		status = s.opts.Plugins.Status()
	}
	route.JSON(w, http.StatusOK, Wiring(name, rec, t, status))
}

func (s *Inspect) plugins(w http.ResponseWriter, _ *http.Request) {
	route.JSON(w, http.StatusOK, pluginsReply(s.opts.Plugins))
}

func (s *Inspect) plugin(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	st, ok := statusOf(s.opts.Plugins, name)
	if !ok {
		route.Error(w, http.StatusNotFound, route.Problem{Code: route.CodeNotFound, Field: "name", Message: "no plugin " + name + " is loaded (GET /api/v1/plugins lists them)"})
		return
	}
	route.JSON(w, http.StatusOK, st)
}

func (s *Inspect) reload(w http.ResponseWriter, r *http.Request) {
	out, err := reload(r.Context(), s.opts.Plugins, s.opts.Busy, r.PathValue("name"))
	if err != nil {
		answer(w, err)
		return
	}
	route.JSON(w, http.StatusOK, out)
}

// answer writes err as the problem it is.
func answer(w http.ResponseWriter, err error) {
	var in *InputError
	var re *host.ReloadError
	switch {
	case errors.As(err, &in):
		route.Error(w, http.StatusBadRequest, route.Problem{Code: route.CodeInvalidField, Field: in.Field, Message: in.Error()})
	case errors.Is(err, ErrNotFound):
		route.Error(w, http.StatusNotFound, route.Problem{Code: route.CodeNotFound, Message: err.Error()})
	case errors.As(err, &re) && re.Stage == "closed":
		route.Error(w, http.StatusServiceUnavailable, route.Problem{Code: route.CodeUnavailable, Message: err.Error()})
	case errors.As(err, &re):
		// A new version refused by its checks: the running one keeps serving.
		route.Error(w, http.StatusConflict, route.Problem{Code: route.CodeConflict, Field: "name", Message: err.Error()})
	default:
		route.Error(w, http.StatusInternalServerError, route.Problem{Code: route.CodeInternal, Message: err.Error()})
	}
}
