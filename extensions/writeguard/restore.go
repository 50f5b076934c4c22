package writeguard

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
)

// RestoreTool is the restore_backup tool: it puts back the version of a file the
// write guard saved before the latest text_editor write (or a given backup), and
// removes a file that did not exist before it. The version it replaces is backed
// up first, so a restore can be undone the same way.
func RestoreTool(paths func() (Paths, error)) sdk.Tool {
	return sdk.Tool{
		Name:        "restore_backup",
		Description: "Put a file back as it was before your last text_editor write (the write guard keeps a backup of every write).",
		Parameters: `{"type":"object","properties":{` +
			`"path":{"type":"string","description":"The file, as you gave it to text_editor."},` +
			`"backup":{"type":"string","description":"Optional: a specific backup file to restore instead of the latest."}},` +
			`"required":["path"]}`,
		PromptFile: "agent.system.tool.restore_backup.md",
		Run: func(ctx context.Context, c *sdk.Call, raw json.RawMessage) (*exocortexv1.ToolResult, error) {
			var a struct {
				Path   string `json:"path"`
				Backup string `json:"backup"`
			}
			if err := json.Unmarshal(raw, &a); err != nil || strings.TrimSpace(a.Path) == "" {
				return nil, errors.New(`restore_backup: give "path", the file to restore`)
			}
			p, err := paths()
			if err != nil {
				return nil, fmt.Errorf("restore_backup: %w", err)
			}
			argsJSON, _ := json.Marshal(map[string]string{"action": "write", "path": a.Path})
			_, path, _, ok := p.target(&exocortexv1.ToolCall{Name: "text_editor", ArgsJson: string(argsJSON)})
			if !ok {
				return nil, fmt.Errorf("restore_backup: %s is outside the editor's roots (%s)", a.Path, strings.Join(p.Roots, ", "))
			}
			entry, err := latest(filepath.Join(p.Home, IndexFile), path, a.Backup)
			if err != nil {
				return nil, fmt.Errorf("restore_backup: %w", err)
			}
			// Every access to the file goes through the root, resolved at that
			// moment: a directory that became a link to the outside fails.
			root, rel, err := p.locate(path)
			if err != nil {
				return nil, fmt.Errorf("restore_backup: %w", err)
			}
			defer root.Close()
			// Keep what is there now, so the restore can be undone.
			if fi, err := root.Stat(rel); err == nil && fi.Mode().IsRegular() {
				now := time.Now().UTC()
				dst := filepath.Join(p.Home, BackupDir, safe(c.Context().GetSessionId()), now.Format("20060102T150405.000000000")+"-pre-restore-"+filepath.Base(path))
				if err := copyFromRoot(root, rel, dst); err != nil {
					return nil, fmt.Errorf("restore_backup: backing up the current %s first: %w", path, err)
				}
				_ = appendIndex(filepath.Join(p.Home, IndexFile), IndexEntry{Time: now.Format(time.RFC3339Nano), Session: c.Context().GetSessionId(), Path: path, Backup: dst, Size: fi.Size()})
			} else if err != nil && !errors.Is(err, os.ErrNotExist) {
				return nil, fmt.Errorf("restore_backup: %s: %w (a link on the way leads outside the editor's roots?)", path, err)
			}
			if entry.Backup == "" {
				if err := root.Remove(rel); err != nil && !errors.Is(err, os.ErrNotExist) {
					return nil, fmt.Errorf("restore_backup: removing %s: %w", path, err)
				}
				return &exocortexv1.ToolResult{Content: fmt.Sprintf("%s did not exist before the write of %s; removed it.", a.Path, entry.Time)}, nil
			}
			b, err := os.ReadFile(entry.Backup)
			if err != nil {
				return nil, fmt.Errorf("restore_backup: reading the backup %s: %w", entry.Backup, err)
			}
			tmp := rel + ".restore.tmp"
			if err := root.WriteFile(tmp, b, 0o644); err != nil {
				return nil, fmt.Errorf("restore_backup: writing %s: %w", path, err)
			}
			if err := root.Rename(tmp, rel); err != nil {
				_ = root.Remove(tmp)
				return nil, fmt.Errorf("restore_backup: writing %s: %w", path, err)
			}
			return &exocortexv1.ToolResult{Content: fmt.Sprintf("Restored %s (%d bytes) from the backup taken at %s.", a.Path, len(b), entry.Time)}, nil
		},
	}
}

// latest finds the newest index entry for path (or the one naming backup).
func latest(index, path, backup string) (IndexEntry, error) {
	f, err := os.Open(index)
	if errors.Is(err, os.ErrNotExist) {
		return IndexEntry{}, fmt.Errorf("no backups have been taken yet")
	}
	if err != nil {
		return IndexEntry{}, err
	}
	defer f.Close()
	var found *IndexEntry
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		var e IndexEntry
		if json.Unmarshal(sc.Bytes(), &e) != nil || e.Path != path || strings.Contains(e.Backup, "-pre-restore-") && backup == "" {
			continue
		}
		if backup != "" && e.Backup != backup {
			continue
		}
		found = &e
	}
	if found == nil {
		if backup != "" {
			return IndexEntry{}, fmt.Errorf("no backup %s of %s", backup, path)
		}
		return IndexEntry{}, fmt.Errorf("no backup of %s", path)
	}
	return *found, nil
}
