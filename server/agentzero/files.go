package agentzero

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/exocortex/exocortex/core/session"
	"github.com/exocortex/exocortex/server/route"
	"github.com/exocortex/exocortex/server/sessions"
)

// filesGet is api_files_get, confined to sessions' own files: with
// context_id, that session's; without, a path must lie in some session's
// files directory (the paths the agent was told of its attachments).
func (a *API) filesGet(w http.ResponseWriter, r *http.Request) {
	var b struct {
		Paths     json.RawMessage `json:"paths"`
		ContextID string          `json:"context_id"`
	}
	if !decode(w, r, &b) {
		return
	}
	if len(b.Paths) == 0 || string(b.Paths) == "null" || string(b.Paths) == "[]" {
		fail(w, http.StatusBadRequest, "paths array is required")
		return
	}
	var paths []string
	if err := json.Unmarshal(b.Paths, &paths); err != nil {
		fail(w, http.StatusBadRequest, "paths must be an array")
		return
	}
	if b.ContextID != "" {
		if err := session.ValidateName(b.ContextID); err != nil {
			fail(w, http.StatusBadRequest, "context_id: "+err.Error())
			return
		}
		if ok, _ := a.m.Store().Exists(r.Context(), b.ContextID); !ok {
			fail(w, http.StatusNotFound, "Context not found")
			return
		}
	}
	out := map[string]string{}
	for _, p := range paths {
		full, err := a.confine(b.ContextID, p)
		if err != nil {
			fail(w, http.StatusForbidden, err.Error())
			return
		}
		data, err := os.ReadFile(full)
		if err != nil {
			// Agent Zero leaves a missing file out of the answer.
			continue
		}
		out[filepath.Base(full)] = base64.StdEncoding.EncodeToString(data)
	}
	route.JSON(w, http.StatusOK, out)
}

// confine resolves p inside a session's files directory, or says why not.
// Symbolic links are followed before the check, so none leads out.
func (a *API) confine(contextID, p string) (string, error) {
	refuse := func(why string) error {
		return fmt.Errorf("path %q is refused: %s; api_files_get hands back only a session's own files (the attachments under %s)", p, why, filepath.Join(a.dir, "NAME.files"))
	}
	if p == "" {
		return "", refuse("it is empty")
	}
	if strings.Contains(p, "\x00") {
		return "", refuse("it holds a NUL byte")
	}
	for _, part := range strings.Split(filepath.ToSlash(p), "/") {
		if part == ".." {
			return "", refuse("it climbs out with ..")
		}
	}
	var full string
	switch {
	case !filepath.IsAbs(p) && contextID == "":
		return "", refuse("a relative path needs context_id")
	case !filepath.IsAbs(p):
		full = filepath.Join(sessions.FilesDir(a.dir, contextID), p)
	default:
		full = filepath.Clean(p)
	}
	real, err := filepath.EvalSymlinks(full)
	if err != nil {
		real = full // a missing file is left out, not refused
	}
	rel, err := filepath.Rel(a.dir, real)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return "", refuse("it is outside the sessions' files")
	}
	first, _, _ := strings.Cut(filepath.ToSlash(rel), "/")
	name, ok := strings.CutSuffix(first, ".files")
	if !ok || first == rel {
		return "", refuse("it is not in a session's files directory")
	}
	if contextID != "" && name != contextID {
		return "", refuse("it is another session's file")
	}
	return real, nil
}
