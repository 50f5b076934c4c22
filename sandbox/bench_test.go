package sandbox_test

import (
	"os/exec"
	"testing"

	"github.com/exocortex/exocortex/sandbox"
)

// BenchmarkStart compares starting /bin/true plainly and in the sandbox (the
// launcher and its second stage are two more starts of this binary, plus the
// namespaces and Landlock): the price of every command the agent runs.
func BenchmarkStart(b *testing.B) {
	if st := sandbox.Probe(""); !st.Available {
		b.Skip(st.String())
	}
	dir := b.TempDir()
	for _, c := range []struct {
		name              string
		confined, network bool
	}{{"plain", false, false}, {"sandboxed, network on", true, true}, {"sandboxed, network off", true, false}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				cmd := exec.Command("/bin/true")
				if c.confined {
					if err := sandbox.Wrap(cmd, sandbox.Policy{WriteRoots: []string{dir}, Network: c.network}, ""); err != nil {
						b.Fatal(err)
					}
				}
				if err := cmd.Run(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
