package tasks

import (
	"testing"

	"github.com/exocortex/exocortex/server/openapi"
)

func TestOpsDescribeEveryRoute(t *testing.T) {
	ts, err := Open(nil, t.TempDir(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := openapi.Check(ts.Routes(), Ops()); err != nil {
		t.Fatal(err)
	}
}
