package gang

import (
	"os/exec"
	"strings"
	"testing"
)

// TestGangStaysPure fails when client-go (or k8s.io/kubernetes) enters the
// dependencies of pkg/gang or of its verb packages (explain, admit, bind):
// they take objects and small client interfaces; only pkg/gang/kube talks
// to an API server (docs/design.md#layout).
func TestGangStaysPure(t *testing.T) {
	for _, pkg := range []string{".", "./explain", "./admit", "./bind"} {
		out, err := exec.Command("go", "list", "-deps", pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list %s: %v\n%s", pkg, err, out)
		}
		for _, dep := range strings.Fields(string(out)) {
			if strings.HasPrefix(dep, "k8s.io/client-go/") || strings.HasPrefix(dep, "k8s.io/kubernetes/") {
				t.Errorf("pkg/gang/%s depends on %s", strings.TrimPrefix(pkg, "./"), dep)
			}
		}
	}
}
