package discover

import "testing"

func TestEditorTemp(t *testing.T) {
	cases := []struct {
		name string
		temp bool
	}{
		{".main.go.swp", true}, {"main.go.swp", true}, {".main.py.swo", true}, {"4913", true}, {"5036", true},
		{"main.go~", true}, {".#main.go", true}, {"#main.go#", true},
		{"main.go___jb_tmp___", true}, {"main.go___jb_old___", true}, {"main.py.kate-swp", true}, {"x.crswap", true},
		{".goutputstream-ABC123", true},
		{"main.go", false}, {"main.py", false}, {"plugin.json", false}, {"go.mod", false}, {"v2", false}, {"#notes", false}, {"", false},
	}
	for _, tc := range cases {
		if got := EditorTemp(tc.name); got != tc.temp {
			t.Errorf("EditorTemp(%q) = %v, want %v", tc.name, got, tc.temp)
		}
	}
}
