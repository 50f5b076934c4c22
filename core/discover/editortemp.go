package discover

import (
	"strings"
)

// EditorTemp reports whether a file name is one an editor writes beside the
// file being edited and removes again: swap and lock files, backups, the
// probe and safe-write files. Watching code (hot reload, `exocortex dev`)
// ignores them, so saving a file reacts to the saved file alone.
//
//	.main.go.swp .main.go.swo 4913   vim (swap files; the numeric file it probes the directory with)
//	main.go~                         vim, emacs, gedit backups
//	.#main.go  #main.go#             emacs lock and auto-save files
//	main.go___jb_tmp___  ___jb_old___ JetBrains IDEs' safe write
//	main.go.kate-swp  main.go.crswap  Kate, Chromium-based editors
//	.goutputstream-XXXXXX             GTK editors' safe write (hidden)
func EditorTemp(name string) bool {
	switch {
	case name == "":
		return false
	case strings.HasPrefix(name, "."), strings.HasSuffix(name, "~"):
		return true
	case strings.HasPrefix(name, "#") && strings.HasSuffix(name, "#"):
		return true
	case strings.Contains(name, "___jb_tmp___"), strings.Contains(name, "___jb_old___"):
		return true
	case allDigits(name):
		return true
	}
	for _, suf := range []string{".swp", ".swo", ".swx", ".swn", ".kate-swp", ".crswap"} {
		if strings.HasSuffix(name, suf) {
			return true
		}
	}
	return false
}

func allDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}
