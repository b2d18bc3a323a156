package cmd

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// complete runs cobra's hidden __complete command and returns the
// candidates it prints (the last line is the directive).
func complete(t *testing.T, args ...string) []string {
	t.Helper()
	code, out, stderr := run(t, "", append([]string{"__complete"}, args...)...)
	if code != ExitOK {
		t.Fatalf("__complete %v: exit %d, stderr %q", args, code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) == 0 || !strings.HasPrefix(lines[len(lines)-1], ":") {
		t.Fatalf("__complete %v printed no directive: %q", args, out)
	}
	return lines[:len(lines)-1]
}

func TestCompleteSubject(t *testing.T) {
	snap := []string{"--snapshot", exampleSnapshot, "-n", "ml-research"}
	kinds := []string{"podgroups.scheduling.k8s.io/", "podgroups.scheduling.volcano.sh/", "podgroups.scheduling.x-k8s.io/",
		"job/", "deployment/", "replicaset/", "statefulset/", "vcjob/", "jobset/", "leaderworkerset/", "pytorchjob/", "tfjob/", "xgboostjob/",
		"paddlejob/", "jaxjob/", "mpijob/", "raycluster/", "rayjob/", "trainjob/"}
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"explain offers pods and PodGroups", append([]string{"explain"}, append(snap, "")...), append([]string{"pod/", "podgroup/"}, kinds...)},
		{"place offers no pods", append([]string{"place"}, append(snap, "")...), append([]string{"podgroup/"}, kinds...)},
		{"PodGroup names", append([]string{"bind"}, append(snap, "podgroup/")...), []string{"podgroup/llm-pretrain"}},
		{"one PodGroup kind", append([]string{"admit"}, append(snap, "podgroups.scheduling.k8s.io/l")...), []string{"podgroups.scheduling.k8s.io/llm-pretrain"}},
		{"a kind with none", append([]string{"admit"}, append(snap, "podgroups.scheduling.volcano.sh/")...), nil},
		{"pod names by prefix", append([]string{"explain"}, append(snap, "pod/llm-pretrain-worker-1")...), []string{"pod/llm-pretrain-worker-1"}},
		{"no pods for place", append([]string{"place"}, append(snap, "pod/")...), nil},
		{"one argument only", append([]string{"place"}, append(snap, "podgroup/llm-pretrain", "")...), nil},
		{"bind offers no workloads", append([]string{"bind"}, append(snap, "")...), append([]string{"podgroup/"}, kinds[:3]...)},
		{"a snapshot holds no workloads", append([]string{"place"}, append(snap, "jobset/")...), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, complete(t, tc.args...), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("candidates (-want +got):\n%s", diff)
			}
		})
	}
	// Every pod of the namespace, and only those; the pending ones (the
	// gang's 10 and a gated pod) first.
	pods := complete(t, append([]string{"explain"}, append(snap, "pod/")...)...)
	if len(pods) < 20 || !slices.Contains(pods, "pod/llm-pretrain-worker-0") || slices.ContainsFunc(pods, func(s string) bool { return !strings.HasPrefix(s, "pod/") }) {
		t.Errorf("pod candidates %v", pods)
	}
	pending := []string{"pod/eval-llm-nightly-6qs4l", "pod/llm-pretrain-launcher"}
	for i := range 8 {
		pending = append(pending, fmt.Sprintf("pod/llm-pretrain-worker-%d", i))
	}
	if diff := cmp.Diff(pending, pods[:len(pending)]); diff != "" {
		t.Errorf("pending pods first (-want +got):\n%s", diff)
	}
	// -o offers every format the verb prints.
	for verb, want := range map[string]string{"explain": "wide", "place": "wide", "snapshot": "yaml"} {
		if got := complete(t, verb, "-o", ""); !slices.Contains(got, want) || !slices.Contains(got, "json") || !slices.Contains(got, "jsonpath") {
			t.Errorf("%s -o: %v", verb, got)
		}
	}
}

// TestCompleteNamespaceOffline: -n completes from --snapshot's file, with
// no cluster to ask.
func TestCompleteNamespaceOffline(t *testing.T) {
	want := []string{"default", "kube-system", "ml-prod", "ml-research"}
	for _, verb := range []string{"explain", "capacity", "place"} {
		if diff := cmp.Diff(want, complete(t, verb, "--snapshot", exampleSnapshot, "-n", "")); diff != "" {
			t.Errorf("%s -n (-want +got):\n%s", verb, diff)
		}
	}
}

// TestSnapshotAllNamespaces: -A is accepted as kubectl get's habit and
// changes nothing (a snapshot is of every namespace); -n is still refused.
func TestSnapshotAllNamespaces(t *testing.T) {
	_, want, _ := run(t, "", "snapshot", "--summary", "--snapshot", exampleSnapshot)
	for _, flag := range []string{"-A", "--all-namespaces"} {
		code, out, stderr := run(t, "", "snapshot", flag, "--summary", "--snapshot", exampleSnapshot)
		if code != ExitOK || out != want {
			t.Errorf("snapshot %s: exit %d, stderr %q; output differs: %v", flag, code, stderr, out != want)
		}
	}
	if code, _, _ := run(t, "", "snapshot", "-A", "-n", "ml", "--snapshot", exampleSnapshot); code != ExitUsage {
		t.Errorf("snapshot -A -n: exit %d, want %d", code, ExitUsage)
	}
}
