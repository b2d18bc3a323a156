package gang_test

import (
	"testing"

	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	// Every gang system, registered for the tests of this package, the
	// internal ones included (one test binary).
	_ "github.com/kubectl-gang/kubectl-gang/pkg/systems"
)

// TestEverySystemRegistered keeps the internal tests' sources the wings'.
func TestEverySystemRegistered(t *testing.T) {
	for _, src := range []gang.Source{gang.SourceNative, "scheduling.volcano.sh", "scheduling.x-k8s.io", "kueue.x-k8s.io"} {
		if gang.SystemOf(src) == nil {
			t.Errorf("no gang system %q registered", src)
		}
	}
}
