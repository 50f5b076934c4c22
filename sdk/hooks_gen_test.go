package sdk

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/exocortex/exocortex/sdk/internal/hookgen"
)

// generated returns what `make generate` writes for the protocol as built.
func generated(t *testing.T) []hookgen.Hook {
	t.Helper()
	src, err := os.ReadFile("../proto/exocortex/v1/plugin_grpc.pb.go")
	if err != nil {
		t.Fatal(err)
	}
	docs, err := hookgen.Docs(src)
	if err != nil {
		t.Fatal(err)
	}
	hs, err := hookgen.Collect(docs)
	if err != nil {
		t.Fatal(err)
	}
	return hs
}

// The SDKs' hook code is what the generator writes from the protocol: a hook
// added to proto/ without `make generate` fails here (and does not compile).
func TestGeneratedHooksAreFresh(t *testing.T) {
	hs := generated(t)
	goSrc, err := hookgen.Go(hs)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct {
		path string
		want []byte
	}{
		{"hooks_gen.go", goSrc},
		{"python/exocortex/_hooks_gen.py", hookgen.Python(hs)},
	} {
		have, err := os.ReadFile(f.path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(have, f.want) {
			t.Errorf("sdk/%s is stale: it is not what the generator writes from the protocol; run `make generate` and commit", f.path)
		}
	}
}

// The server embeds no Unimplemented stub: the SDK built with one hook's RPC
// method missing (here, as if the protocol had gained a hook and the
// generator had not run) does not compile, and the compiler names the method.
func TestServerMissingAHookMethodDoesNotCompile(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the package")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	goSrc, err := hookgen.Go(generated(t))
	if err != nil {
		t.Fatal(err)
	}
	const missing = "EmbeddingModelChanged"
	method := regexp.MustCompile(`(?s)\nfunc \(s \*server\) ` + missing + `\(.*?\n}\n`)
	cut := method.ReplaceAll(goSrc, []byte("\n"))
	if bytes.Equal(cut, goSrc) {
		t.Fatalf("the generated code has no server method %s to remove", missing)
	}
	dir := t.TempDir()
	abs, err := filepath.Abs("hooks_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	cutFile := filepath.Join(dir, "hooks_gen.go")
	overlay, _ := json.Marshal(map[string]any{"Replace": map[string]string{abs: cutFile}})
	overlayFile := filepath.Join(dir, "overlay.json")
	if err := os.WriteFile(cutFile, cut, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(overlayFile, overlay, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.CommandContext(t.Context(), goBin, "build", "-overlay", overlayFile, ".").CombinedOutput()
	if err == nil {
		t.Fatalf("the SDK compiled without the server's %s method: a stub answers it", missing)
	}
	if !strings.Contains(string(out), "missing method "+missing) {
		t.Fatalf("the build failed, but not naming the missing method %s:\n%s", missing, out)
	}
}
