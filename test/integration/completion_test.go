package integration

import (
	"slices"

	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
)

// Argument completion reads names from the cluster: pods, and PodGroups of
// every kind the server serves.
func TestCompletionReadsTheCluster(t *testing.T) {
	f := newGangFixture(t, "complete")
	f.nativePodGroup("alpha", 1)
	f.createObject(volcanoPodGroups, testutil.MakeVolcanoPodGroup(f.ns, "beta", 1).Obj())
	f.create(f.pod("worker-0", wholeNode).Obj())
	node := f.node("n0", gpuNode)
	f.create(f.pod("a-bound", testutil.Res{"cpu": "1"}).Node(node).Phase(corev1.PodRunning).Obj())

	candidates := func(args ...string) []string {
		// The word being completed comes last.
		all := append([]string{"__complete", args[0], "--kubeconfig", env.Kubeconfig, "-n", f.ns}, args[1:]...)
		code, out, stderr := runCLI(t, "", all...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		return slices.DeleteFunc(lines, func(l string) bool { return strings.HasPrefix(l, ":") })
	}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"place", "podgroup/"}, []string{"podgroup/alpha", "podgroup/beta"}},
		{[]string{"bind", "podgroups.scheduling.volcano.sh/"}, []string{"podgroups.scheduling.volcano.sh/beta"}},
		{[]string{"explain", "pod/w"}, []string{"pod/worker-0"}},
		// Pods that wait for a node come first (the server filters them).
		{[]string{"explain", "pod/"}, []string{"pod/worker-0", "pod/a-bound"}},
	} {
		if diff := cmp.Diff(tc.want, candidates(tc.args...)); diff != "" {
			t.Errorf("%v (-want +got):\n%s", tc.args, diff)
		}
	}
	// -n completes with the cluster's namespaces.
	if got := candidates("place", "podgroup/alpha", "--namespace", ""); !slices.Contains(got, f.ns) || !slices.Contains(got, "default") {
		t.Errorf("namespaces: %v, want %s and default among them", got, f.ns)
	}
}

// kubectl habits against a live cluster: -v=6 logs each request with its
// status, and explain without a subject lists what is pending there.
func TestLiveHabits(t *testing.T) {
	f := newGangFixture(t, "habits")
	f.nativePodGroup("train", 2)
	f.create(f.pod("train-0", wholeNode).PodGroup("train").Obj())
	f.create(f.pod("train-1", wholeNode).PodGroup("train").Obj())
	f.create(f.pod("solo", testutil.Res{"cpu": "1"}).Obj())
	f.node("n0", gpuNode)

	code, out, stderr := f.run("explain", "--v=6")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"/api/v1/nodes", "200 OK"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("--v=6 logged no %q:\n%.2000s", want, stderr)
		}
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[1], "pod/solo ") || !strings.HasPrefix(lines[2], "podgroup/train ") ||
		!strings.Contains(lines[2], " 2/2 ") || !strings.Contains(lines[2], "1/2 fit: ") {
		t.Errorf("pending list:\n%s", out)
	}
	// Without -v nothing is logged.
	if _, _, stderr := f.run("explain", "-o", "name"); stderr != "" {
		t.Errorf("stderr without -v: %q", stderr)
	}
}
