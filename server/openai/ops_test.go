package openai

import (
	"testing"

	"github.com/exocortex/exocortex/server/openapi"
)

func TestOpsDescribeEveryRoute(t *testing.T) {
	if err := openapi.Check(New(nil).Routes(), Ops()); err != nil {
		t.Fatal(err)
	}
}
