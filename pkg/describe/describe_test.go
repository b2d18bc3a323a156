package describe

import (
	"bytes"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-gang/kubectl-gang/pkg/gang/explain"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/noderesources"
)

// TestExplainColor: colour only where the writer is told it is on a
// terminal, and never inside tables, whose columns it would shift.
func TestExplainColor(t *testing.T) {
	e := &explain.Explanation{Verdict: explain.VerdictUnschedulable, Message: "0/1 nodes are available: 1 Insufficient cpu.",
		Pod: &corev1.Pod{}, Nodes: []explain.Node{{Name: "n", Plugin: noderesources.Name, Reasons: []string{"Insufficient cpu"}}}}
	e.Pod.Namespace, e.Pod.Name = "ns", "p"
	for _, color := range []bool{false, true} {
		var buf bytes.Buffer
		if err := Explanation(&buf, e, Options{Color: color}); err != nil {
			t.Fatal(err)
		}
		first, rest, _ := strings.Cut(buf.String(), "\n")
		if got := strings.Contains(first, "\x1b["); got != color {
			t.Errorf("color %v: verdict line %q", color, first)
		}
		for _, line := range strings.Split(rest, "\n") {
			if strings.HasPrefix(line, "n ") && strings.Contains(line, "\x1b[") {
				t.Errorf("color %v: a table row is coloured: %q", color, line)
			}
		}
	}
}
