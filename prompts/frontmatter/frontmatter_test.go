package frontmatter

import (
	"strings"
	"testing"
	"testing/fstest"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name     string
		in       string
		want     Meta
		wantBody string
		wantErr  string // substring; "" means no error
	}{
		{name: "no header", in: "Just text.\n", wantBody: "Just text.\n"},
		{name: "dashes later are body", in: "Text\n---\nmore\n", wantBody: "Text\n---\nmore\n"},
		{
			name:     "signal and description",
			in:       "---\nsignal: repeat\ndescription: >\n  The reply repeated\n  the previous one.\n---\nBody {{x}}\n",
			want:     Meta{Signal: "repeat", Description: "The reply repeated the previous one."},
			wantBody: "Body {{x}}\n",
		},
		{name: "CRLF", in: "---\r\nsignal: tool_blocked\r\n---\r\nBody\r\n", want: Meta{Signal: "tool_blocked"}, wantBody: "Body\r\n"},
		{name: "empty header", in: "---\n---\nBody", wantBody: "Body"},
		{name: "description only", in: "---\ndescription: main prompt\n---\n", want: Meta{Description: "main prompt"}, wantBody: ""},
		{name: "unterminated", in: "---\nsignal: repeat\nBody\n", wantErr: "never closed"},
		{name: "lone opener", in: "---", wantErr: "never closed"},
		{name: "unknown key", in: "---\nsingal: repeat\n---\n", wantErr: "field singal not found"},
		{name: "camel case signal", in: "---\nsignal: toolBlocked\n---\n", wantErr: `signal "toolBlocked" is not a snake_case name`},
		{name: "double underscore", in: "---\nsignal: tool__blocked\n---\n", wantErr: "not a snake_case name"},
		{name: "leading digit", in: "---\nsignal: 2nd\n---\n", wantErr: "not a snake_case name"},
		{name: "bad yaml", in: "---\nsignal: [a\n---\n", wantErr: "front matter"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, body, err := Parse("x.md", []byte(tc.in))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tc.wantErr)
				}
				if !strings.HasPrefix(err.Error(), "x.md: ") {
					t.Errorf("error %q does not name the file", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if m != tc.want {
				t.Errorf("meta = %+v, want %+v", m, tc.want)
			}
			if string(body) != tc.wantBody {
				t.Errorf("body = %q, want %q", body, tc.wantBody)
			}
		})
	}
}

func TestReadDirAndSignals(t *testing.T) {
	fsys := fstest.MapFS{
		"b.md":      {Data: []byte("---\nsignal: beta\ndescription: second\n---\nB")},
		"a.md":      {Data: []byte("---\nsignal: alpha\n---\nA")},
		"plain.md":  {Data: []byte("no header")},
		"notes.txt": {Data: []byte("---\nsignal: ignored\n---\n")},
	}
	files, err := ReadDir(fsys)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 3 || files[0].Name != "a.md" || files[2].Name != "plain.md" {
		t.Fatalf("files = %+v", files)
	}
	decls, err := Signals(files)
	if err != nil {
		t.Fatal(err)
	}
	want := []Decl{{Value: "alpha", PromptFile: "a.md"}, {Value: "beta", PromptFile: "b.md", Description: "second"}}
	if len(decls) != len(want) || decls[0] != want[0] || decls[1] != want[1] {
		t.Errorf("decls = %+v, want %+v", decls, want)
	}
}

func TestSignalsDuplicate(t *testing.T) {
	files := []File{
		{Name: "fw.a.md", Meta: Meta{Signal: "repeat"}},
		{Name: "fw.b.md", Meta: Meta{Signal: "repeat"}},
	}
	_, err := Signals(files)
	if err == nil || !strings.Contains(err.Error(), "fw.a.md") || !strings.Contains(err.Error(), "fw.b.md") {
		t.Fatalf("err = %v, want a duplicate error naming both files", err)
	}
}

func TestReadDirReportsEveryBadFile(t *testing.T) {
	fsys := fstest.MapFS{
		"one.md": {Data: []byte("---\nsignal: Bad\n---\n")},
		"two.md": {Data: []byte("---\nsignal: ok\n")},
		"ok.md":  {Data: []byte("---\nsignal: fine\n---\n")},
	}
	files, err := ReadDir(fsys)
	if err == nil || !strings.Contains(err.Error(), "one.md") || !strings.Contains(err.Error(), "two.md") {
		t.Fatalf("err = %v, want both bad files named", err)
	}
	if len(files) != 1 || files[0].Name != "ok.md" {
		t.Errorf("good files = %+v, want ok.md kept", files)
	}
}
