package gang

import (
	"os/exec"
	"strings"
	"testing"
)

// TestGangStaysPure fails when client-go (or k8s.io/kubernetes) enters
// pkg/gang's dependencies: resolution, placement, admission and the bind
// protocol take objects and a BindClient; only pkg/gang/binder talks to an
// API server.
func TestGangStaysPure(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, "k8s.io/client-go/") || strings.HasPrefix(dep, "k8s.io/kubernetes/") {
			t.Errorf("pkg/gang depends on %s", dep)
		}
	}
}
