package sessions

import (
	"testing"
	"time"

	"github.com/exocortex/exocortex/server/openapi"
)

func TestApprovalOpsDescribeEveryRoute(t *testing.T) {
	if err := openapi.Check(NewApprovals(time.Minute).Routes(), ApprovalOps()); err != nil {
		t.Fatal(err)
	}
}

func TestChatOpsDescribeEveryRoute(t *testing.T) {
	if err := openapi.Check(NewManager(Options{Dir: t.TempDir()}).ChatRoutes(), ChatOps()); err != nil {
		t.Fatal(err)
	}
}
