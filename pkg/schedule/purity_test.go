package schedule

import (
	"os/exec"
	"strings"
	"testing"
)

// TestCoreStaysPure fails when client-go (or k8s.io/kubernetes) enters the
// core's dependencies: pkg/schedule takes objects and returns decisions, and
// must never be able to talk to an API server.
func TestCoreStaysPure(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "./...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, "k8s.io/client-go/") || strings.HasPrefix(dep, "k8s.io/kubernetes/") {
			t.Errorf("pkg/schedule depends on %s", dep)
		}
	}
}
