package agentzero

import (
	"testing"

	"github.com/exocortex/exocortex/server/openapi"
)

// TestOpsDescribeEveryRoute: each route, at /api/NAME and /NAME, has its Op.
func TestOpsDescribeEveryRoute(t *testing.T) {
	if err := openapi.Check(New(nil, t.TempDir()).Routes(), Ops()); err != nil {
		t.Fatal(err)
	}
}
