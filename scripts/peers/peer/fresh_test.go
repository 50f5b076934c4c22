package peer

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func TestFreshCopies(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a", "exocortex"), filepath.Join(dir, "b", "exocortex")
	for i, p := range []string{a, b} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte{'#', '!', byte('0' + i)}, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	missing, empty := filepath.Join(dir, "none"), ""
	na, nb := a, b
	done, err := FreshCopies(&na, &nb, &missing, &empty)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ orig, copy string }{{a, na}, {b, nb}} {
		if c.copy == c.orig {
			t.Fatalf("%s was not copied", c.orig)
		}
		want, _ := os.ReadFile(c.orig)
		got, err := os.ReadFile(c.copy)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("copy of %s: %q, %v; want %q", c.orig, got, err, want)
		}
		if st, err := os.Stat(c.copy); err != nil || st.Mode()&0o111 == 0 {
			t.Fatalf("copy of %s is not executable: %v %v", c.orig, st.Mode(), err)
		}
	}
	if missing != filepath.Join(dir, "none") || empty != "" {
		t.Fatalf("a path with no file changed: %q %q", missing, empty)
	}
	done()
	if _, err := os.Stat(na); !os.IsNotExist(err) {
		t.Fatalf("done left the copy %s: %v", na, err)
	}
}
