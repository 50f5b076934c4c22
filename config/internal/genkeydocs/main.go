// Command genkeydocs writes config/keydocs_gen.go: the doc comment of every
// field of the configuration's structs, keyed "Type.Field", so that
// `exocortex config keys` explains each key with the comment written beside
// its declaration and the two cannot drift apart. go test fails when the
// generated file is older than the comments (config's TestKeyDocsCurrent).
//
// A field without a comment of its own takes the comment of the documented
// field just above it when that comment names it ("Shell, Python and Node
// are ..."), as a group of fields is usually documented once.
package main

import (
	"flag"
	"fmt"
	"log"
	"os"

	"github.com/exocortex/exocortex/config/internal/keydocs"
)

func main() {
	dir := flag.String("dir", ".", "the config package's directory")
	out := flag.String("out", "keydocs_gen.go", "the file to write")
	flag.Parse()
	src, err := keydocs.Render(*dir)
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(*out, src, 0o644); err != nil {
		log.Fatal(fmt.Errorf("writing %s: %w", *out, err))
	}
}
