// Command greeter (version 3b) compiles but panics before it hand-shakes: the
// end-to-end test checks that the host refuses it and version 2 keeps serving.
package main

import (
	"os"

	"github.com/exocortex/exocortex/sdk"
)

func main() {
	if os.Getenv("GREETER_CONFIG") == "" {
		panic("greeter v3b: GREETER_CONFIG is not set")
	}
	sdk.Serve(sdk.Plugin{Name: "greeter"})
}
