package integration

import (
	"slices"
	"strings"
	"testing"

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
