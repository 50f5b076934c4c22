// Command greeter (version 3a) does not compile: the end-to-end test checks that
// the dev build reports the error with its place and leaves version 2 serving.
package main

import "github.com/exocortex/exocortex/sdk"

func main() {
	sdk.Serve(plugin())
}
