// Package writeguard protects files the agent writes with text_editor: the write
// guard backs each one up before it changes, the write validator checks it after,
// and the restore_backup tool puts a backup back.
//
// Write guard (tool_execute_before, order 25, as in the seed). For a text_editor
// write or patch (the editor's aliases included) of a path inside the editor
// roots (relative paths start at the first root, as the editor resolves them):
//   - an existing file is copied to $EXOCORTEX_HOME/backups/SESSION/TIME-NAME,
//     where NAME is the path with its separators replaced; a file that does not
//     exist yet is recorded with no backup (restoring it removes it);
//   - the backup is appended to $EXOCORTEX_HOME/backups/index.jsonl (time,
//     session, path, backup, size) and to write_log.
//
// The guard never blocks: a backup that fails is logged and the write goes on
// (the boundary, not the guard, decides what may run).
//
// Write validator (tool_execute_after, order 26, as in the seed). After a
// successful text_editor write or patch it reads the file back and checks:
//   - syntax by extension: Go (go/parser), JSON, YAML, Python (python3's ast
//     module, when python3 is installed; skipped otherwise);
//   - truncation: a write whose file on disk is shorter than the content sent; a
//     parse error at the end of the file (unexpected EOF, an unclosed bracket);
//     brackets opened and never closed in a code file; a placeholder left where
//     code was elided ("... rest of the code", "// existing code ...",
//     "[truncated]").
//
// A problem is annotated on the result (the model sees it with the tool's
// output, with the way back: restore_backup) and recorded in write_log.
package writeguard

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/exocortex/exocortex/extensions/internal/toolresult"
	"github.com/exocortex/exocortex/extensions/internal/turn"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
)

// Paths are what the guard needs to know.
type Paths struct {
	// Home is the Exocortex home; backups go under it.
	Home string
	// Roots are text_editor's roots; relative paths start at the first.
	Roots []string
}

// BackupDir and IndexFile are inside the home directory.
const (
	BackupDir = "backups"
	IndexFile = "backups/index.jsonl"
)

// MaxBackupBytes bounds the files backed up (larger ones are recorded, not copied).
const MaxBackupBytes = 10 << 20

// IndexEntry is one line of backups/index.jsonl.
type IndexEntry struct {
	Time    string `json:"time"`
	Session string `json:"session"`
	Path    string `json:"path"`
	// Backup is the copy; "" when the file did not exist before the write.
	Backup string `json:"backup"`
	Size   int64  `json:"size"`
}

// Files declares the backup index and directory.
func Files() []*exocortexv1.FileSpec {
	return []*exocortexv1.FileSpec{
		{Id: "write_backups", Path: "$EXOCORTEX_HOME/" + IndexFile, Access: exocortexv1.Access_ACCESS_WRITE, User: "write_guard",
			Doc: "One JSON line per text_editor write: time, session, path, the backup copy (\"\" for a new file), size."},
		{Id: "write_backups", Path: "$EXOCORTEX_HOME/" + IndexFile, Access: exocortexv1.Access_ACCESS_READ, User: "restore_backup",
			Doc: "Read to find the latest backup of a path."},
	}
}

var writeActions = map[string]string{
	"write": "write", "create": "write", "overwrite": "write",
	"patch": "patch", "replace": "patch", "str_replace": "patch", "edit": "patch",
}

// target returns the action and the resolved path of a text_editor write, or
// ok false for anything else.
func (p Paths) target(tc *exocortexv1.ToolCall) (action, path string, args map[string]any, ok bool) {
	if tc.GetName() != "text_editor" {
		return "", "", nil, false
	}
	args = turn.ArgsMap(tc)
	a, _ := turn.StringArg(args, "action", "op", "operation", "command")
	action, ok = writeActions[strings.ToLower(strings.TrimSpace(a))]
	raw, _ := turn.StringArg(args, "path", "file", "file_path")
	if !ok || raw == "" || len(p.Roots) == 0 {
		return "", "", nil, false
	}
	path = raw
	if !filepath.IsAbs(path) {
		path = filepath.Join(p.Roots[0], path)
	}
	path = filepath.Clean(path)
	for _, r := range p.Roots {
		r = filepath.Clean(r)
		if path == r || strings.HasPrefix(path, r+string(filepath.Separator)) {
			return action, path, args, true
		}
	}
	return "", "", nil, false
}

// locate opens the root path lies in and returns path relative to it. Every
// access through the returned os.Root resolves symbolic links and ".." the way
// the kernel does, at the moment of the access, and fails when they lead out
// of the root: a directory that became a link to the outside after the check
// cannot redirect a backup or a restore there.
func (p Paths) locate(path string) (*os.Root, string, error) {
	for _, r := range p.Roots {
		r = filepath.Clean(r)
		rel, err := filepath.Rel(r, path)
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			continue
		}
		root, err := os.OpenRoot(r)
		if err != nil {
			return nil, "", fmt.Errorf("opening the root %s: %w", r, err)
		}
		return root, rel, nil
	}
	return nil, "", fmt.Errorf("%s is outside the editor's roots (%s)", path, strings.Join(p.Roots, ", "))
}

// copyFromRoot copies rel, read through root (so never from outside it), to
// dst.
func copyFromRoot(root *os.Root, rel, dst string) error {
	in, err := root.Open(rel)
	if err != nil {
		return err
	}
	defer in.Close()
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		os.Remove(dst)
		return err
	}
	return out.Close()
}

func logKey() sdk.Key[*exocortexv1.WriteLog] { return sdk.KeyOf[*exocortexv1.WriteLog]() }

// Guard is the write guard.
type Guard struct {
	Paths func() (Paths, error)
	Now   func() time.Time
}

// Spec declares it.
func (e Guard) Spec() sdk.Spec {
	return sdk.Spec{
		Name:        "write_guard",
		Hooks:       []sdk.Hook{sdk.ToolExecuteBefore(e)},
		Order:       25,
		Reads:       []sdk.KeyRef{logKey()},
		Writes:      []sdk.KeyRef{logKey()},
		Description: "Backs up a file before a text_editor write or patch (backups/, index.jsonl, write_log), so restore_backup can put it back.",
		// Only text_editor writes files it backs up; the host calls it for no other tool.
		ForTools: []string{"text_editor"},
	}
}

// ToolExecuteBefore takes the backup.
func (g Guard) ToolExecuteBefore(_ context.Context, c *sdk.Call, req *exocortexv1.ToolExecuteBeforeRequest) (*exocortexv1.ToolExecuteBeforeResponse, error) {
	if g.Paths == nil {
		return nil, nil
	}
	p, err := g.Paths()
	if err != nil {
		return nil, fmt.Errorf("write_guard: %w", err)
	}
	action, path, _, ok := p.target(req.GetToolCall())
	if !ok {
		return nil, nil
	}
	now := time.Now()
	if g.Now != nil {
		now = g.Now()
	}
	session := c.Context().GetSessionId()
	entry := IndexEntry{Time: now.UTC().Format(time.RFC3339Nano), Session: session, Path: path}
	// Through the root: a path whose links lead outside it is not backed up
	// (text_editor refuses the write), so nothing from outside the roots is
	// copied into backups/.
	root, rel, err := p.locate(path)
	if err != nil {
		return nil, nil
	}
	defer root.Close()
	if fi, err := root.Stat(rel); err == nil && fi.Mode().IsRegular() {
		entry.Size = fi.Size()
		if fi.Size() <= MaxBackupBytes {
			name := now.UTC().Format("20060102T150405.000000000") + "-" + strings.ReplaceAll(strings.TrimPrefix(path, string(filepath.Separator)), string(filepath.Separator), "__")
			dst := filepath.Join(p.Home, BackupDir, safe(session), name)
			if err := copyFromRoot(root, rel, dst); err != nil {
				c.Logger().Warn("write_guard: backup failed; the write goes on", "path", path, "err", err)
				return nil, nil
			}
			entry.Backup = dst
		}
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		// Leads outside the roots (the write will be refused) or cannot be read.
		c.Logger().Warn("write_guard: no backup", "path", path, "err", err)
		return nil, nil
	}
	if err := appendIndex(filepath.Join(p.Home, IndexFile), entry); err != nil {
		c.Logger().Warn("write_guard: the backup index could not be written", "err", err)
	}
	wl, _ := logKey().Get(c)
	if wl == nil {
		wl = &exocortexv1.WriteLog{}
	}
	wl.Writes = append(wl.Writes, &exocortexv1.WriteRecord{Path: path, Backup: entry.Backup, Tool: "text_editor", Iteration: c.Context().GetIteration(),
		Op: action, SizeBefore: entry.Size, RequestId: c.Context().GetRequestId()})
	if n := len(wl.Writes) - 200; n > 0 {
		wl.Writes = wl.Writes[n:]
	}
	logKey().Set(c, wl)
	return nil, nil
}

func safe(s string) string {
	if s == "" {
		return "no-session"
	}
	return strings.NewReplacer("/", "_", "\\", "_", "..", "_").Replace(s)
}

func appendIndex(path string, e IndexEntry) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	b, _ := json.Marshal(e)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	// One write of one short line: appends from several processes do not
	// interleave.
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Validator is the write validator.
type Validator struct {
	Paths func() (Paths, error)
}

// Spec declares it.
func (e Validator) Spec() sdk.Spec {
	return sdk.Spec{
		Name:        "write_validator",
		Hooks:       []sdk.Hook{sdk.ToolExecuteAfter(e)},
		Order:       26,
		Reads:       []sdk.KeyRef{logKey()},
		Writes:      []sdk.KeyRef{logKey()},
		Description: "Reads a file back after a text_editor write: syntax (Go, Python, JSON, YAML) and truncation; annotates problems and records them in write_log.",
		ForTools:    []string{"text_editor"},
	}
}

// ToolExecuteAfter validates the written file.
func (v Validator) ToolExecuteAfter(_ context.Context, c *sdk.Call, req *exocortexv1.ToolExecuteAfterRequest) (*exocortexv1.ToolExecuteAfterResponse, error) {
	if v.Paths == nil || toolresult.Failed(req.GetResult()) {
		return nil, nil
	}
	p, err := v.Paths()
	if err != nil {
		return nil, fmt.Errorf("write_validator: %w", err)
	}
	action, path, args, ok := p.target(req.GetToolCall())
	if !ok {
		return nil, nil
	}
	sent := ""
	if action == "write" {
		sent, _ = turn.StringArg(args, "content", "text")
	}
	problem := Validate(path, sent, action == "write")
	wl, _ := logKey().Get(c)
	if wl != nil {
		for i := len(wl.Writes) - 1; i >= 0; i-- {
			if w := wl.Writes[i]; w.GetPath() == path && !w.GetValidated() {
				w.Validated, w.Problem = true, problem
				logKey().Set(c, wl)
				break
			}
		}
	}
	if problem == "" {
		return nil, nil
	}
	c.Logger().Info("write_validator found a problem", "path", path, "problem", problem)
	note := fmt.Sprintf("write_validator: %s: %s. The previous version is backed up: restore it with restore_backup, or write the file again in full.", path, problem)
	return &exocortexv1.ToolExecuteAfterResponse{Annotations: []string{note}}, nil
}
