package integration

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/cmd"
)

// TestGangOneVerdictLive runs place, explain, admit and bind (--dry-run,
// which checks everything bind checks and writes nothing) on the same gangs
// in the API server and checks that they give one answer per gang, with the
// exit codes of docs/design.md#one-verdict-per-question: bind is the verb
// the offline test (pkg/cmd TestOneVerdictPerQuestion) cannot run.
func TestGangOneVerdictLive(t *testing.T) {
	f := newGangFixture(t, "verdicts")
	f.nodes(2)
	f.nativePodGroup("fits", 2)
	f.nativePodGroup("big", 3)
	f.nativePodGroup("gated", 2)
	for i := range 2 {
		f.create(f.pod(fmt.Sprintf("fits-%d", i), wholeNode).PodGroup("fits").Obj())
		f.create(f.pod(fmt.Sprintf("gated-%d", i), small).PodGroup("gated").SchedulingGate(gangGate).Obj())
	}
	for i := range 3 {
		f.create(f.pod(fmt.Sprintf("big-%d", i), wholeNode).PodGroup("big").Obj())
	}
	// A Volcano job whose workers are enough in all, but no ps exists: its
	// own queue (other tests' queues make the snapshot hold some, so the
	// default queue would be missing from it).
	f.createObject(volcanoQueues, testutil.MakeVolcanoQueue(f.ns+"-q").Capability(testutil.Res{"cpu": "1000"}).Obj())
	f.createObject(volcanoPodGroups, testutil.MakeVolcanoPodGroup(f.ns, "tasks", 2).Queue(f.ns+"-q").
		MinTaskMember(map[string]int64{"ps": 1, "worker": 1}).Obj())
	for i := range 2 {
		f.create(f.pod(fmt.Sprintf("tasks-worker-%d", i), small).VolcanoGroup("tasks").Annotation("volcano.sh/task-spec", "worker").Obj())
	}
	// Volcano gangs judged by Volcano's session (issue #24): one whose
	// queue's capability (1 cpu) lets the allocate action take one of its
	// two members (proportion's queueAllocatable), and one that fits its
	// queue; the API server holds the Queues, so the yes is a plain one.
	f.createObject(volcanoQueues, testutil.MakeVolcanoQueue(f.ns+"-tight").Capability(testutil.Res{"cpu": "1"}).Obj())
	f.createObject(volcanoPodGroups, testutil.MakeVolcanoPodGroup(f.ns, "tight", 2).Queue(f.ns+"-tight").Obj())
	f.createObject(volcanoPodGroups, testutil.MakeVolcanoPodGroup(f.ns, "vfits", 2).Queue(f.ns+"-q").Obj())
	for i := range 2 {
		f.create(f.pod(fmt.Sprintf("tight-%d", i), testutil.Res{"cpu": "1"}).VolcanoGroup("tight").Obj())
		f.create(f.pod(fmt.Sprintf("vfits-%d", i), small).VolcanoGroup("vfits").Obj())
	}

	type answer struct {
		code    int
		verdict string
	}
	tests := []struct {
		name                       string
		subject                    string
		place, explain, admit, bnd answer
	}{
		{"fits", "podgroup/fits", answer{cmd.ExitOK, "Placed"}, answer{cmd.ExitOK, "Schedulable"}, answer{cmd.ExitOK, "Admitted"}, answer{cmd.ExitOK, "DryRun"}},
		{"does not fit", "podgroup/big", answer{cmd.ExitNo, "Unschedulable"}, answer{cmd.ExitNo, "Unschedulable"}, answer{cmd.ExitNo, "Rejected"}, answer{cmd.ExitNo, "NotBound"}},
		// admit decides the release of a gated gang; the others say it
		// does not start until then.
		{"gated", "podgroup/gated", answer{cmd.ExitNo, "Gated"}, answer{cmd.ExitNo, "Gated"}, answer{cmd.ExitOK, "Admitted"}, answer{cmd.ExitNo, "NotBound"}},
		{"a task below its minTaskMember", "podgroups.scheduling.volcano.sh/tasks",
			answer{cmd.ExitNo, "Unschedulable"}, answer{cmd.ExitNo, "Unschedulable"}, answer{cmd.ExitNo, "Rejected"}, answer{cmd.ExitNo, "NotBound"}},
		{"a Volcano queue's share at allocation", "podgroups.scheduling.volcano.sh/tight",
			answer{cmd.ExitNo, "Unschedulable"}, answer{cmd.ExitNo, "Unschedulable"}, answer{cmd.ExitNo, "Rejected"}, answer{cmd.ExitNo, "NotBound"}},
		{"a Volcano gang that fits its queue", "podgroups.scheduling.volcano.sh/vfits",
			answer{cmd.ExitOK, "Placed"}, answer{cmd.ExitOK, "Schedulable"}, answer{cmd.ExitOK, "Admitted"}, answer{cmd.ExitOK, "DryRun"}},
		{"missing PodGroup", "podgroup/none", answer{cmd.ExitUsage, ""}, answer{cmd.ExitUsage, ""}, answer{cmd.ExitUsage, ""}, answer{cmd.ExitUsage, ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, v := range []struct {
				args []string
				want answer
			}{
				{[]string{"place"}, tt.place}, {[]string{"explain"}, tt.explain}, {[]string{"admit"}, tt.admit},
				{[]string{"bind", "--dry-run=client"}, tt.bnd},
			} {
				code, out, stderr := f.run(append(v.args, tt.subject, "-o", "jsonpath={.verdict}")...)
				if code != v.want.code || out != v.want.verdict {
					t.Errorf("%s: exit %d, verdict %q (stderr %q); want %d, %q", v.args[0], code, out, stderr, v.want.code, v.want.verdict)
				}
			}
		})
	}
	// Nothing above wrote anything.
	for _, pod := range []string{"fits-0", "fits-1"} {
		if nodes := f.boundNodes(pod); nodes[pod] != "" {
			t.Errorf("%s was bound to %s by a dry run", pod, nodes[pod])
		}
	}
}

// TestGangOneVerdictQuota: a what-if the namespace's ResourceQuota would
// refuse gets one answer from place, explain and admit (bind takes no -f),
// the refusal the API server gives; and a user who may not list the
// quotas gets no yes from any of them.
func TestGangOneVerdictQuota(t *testing.T) {
	f := newGangFixture(t, "verdicts-quota")
	f.nodes(2)
	f.quota("gpus", corev1.ResourceQuotaSpec{Hard: testutil.Res{"requests.nvidia.com/gpu": "16"}.List()}, testutil.Res{"requests.nvidia.com/gpu": "8"})
	const fourGPUs = `{requests: {cpu: "2", memory: 16Gi, nvidia.com/gpu: "4"}, limits: {nvidia.com/gpu: "4"}}`
	over := f.file("over.yaml", f.job("over", 4, fourGPUs))       // 16 GPUs, 8 left
	within := f.file("within.yaml", f.job("within", 2, fourGPUs)) // 8 GPUs
	if err := f.dryRunCreate(f.podManifest("probe", `{requests: {nvidia.com/gpu: "12"}, limits: {nvidia.com/gpu: "12"}}`)); err == nil {
		t.Fatal("the API server's quota admission took a pod beyond the quota")
	}
	for _, tc := range []struct {
		file string
		want []int
	}{{over, []int{cmd.ExitNo, cmd.ExitNo, cmd.ExitNo}}, {within, []int{cmd.ExitOK, cmd.ExitOK, cmd.ExitOK}}} {
		var got []int
		for _, verb := range []string{"place", "explain", "admit"} {
			code, _, _ := f.run(verb, "-f", tc.file)
			got = append(got, code)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: place, explain, admit exit %v, want %v", tc.file, got, tc.want)
		}
	}

	// A user who may read what placement needs but not ResourceQuotas.
	user := f.ns + "-reader"
	grantReader(t, f, user)
	unknown := "the ResourceQuotas of namespace " + f.ns + " could not be listed, so the quota headroom for the new members is unknown"
	for _, tc := range []struct{ verb, jsonpath, want string }{
		{"place", "{.verdict} {.notEvaluated}", `Placed ["` + unknown + `"]`},
		{"explain", "{.verdict} {.notEvaluated}", `Unverified ["` + unknown + `"]`},
		{"admit", `{.verdict} {.checks[?(@.name=="ResourceQuota")].result}`, "Unverified NotEvaluated"},
	} {
		code, out, stderr := f.runImpersonating(user, tc.verb, "-f", within, "-o", "jsonpath="+tc.jsonpath)
		if code != cmd.ExitNo || out != tc.want || !strings.Contains(stderr, "cannot list resourcequotas") {
			t.Errorf("%s as %s: exit %d, output %q, stderr %q; want 3 and %q: the quota could not be read", tc.verb, user, code, out, stderr, tc.want)
		}
	}
}

// TestGangAdmitUngateNothingToRelease: --ungate with a gate no member
// carries releases nothing; that is a warning and exit 3, not "removed from
// 0 member(s)" and 0. Members that keep another gate are named.
func TestGangAdmitUngateNothingToRelease(t *testing.T) {
	f := newGangFixture(t, "ungate-none")
	f.nodes(2)
	f.nativePodGroup("pair", 2)
	f.create(f.pod("pair-0", wholeNode).PodGroup("pair").SchedulingGate(gangGate).SchedulingGate(keepGate).Obj())
	f.create(f.pod("pair-1", wholeNode).PodGroup("pair").SchedulingGate(gangGate).Obj())

	code, out, stderr := f.run("admit", "podgroup/pair", "--ungate", "example.com/typo", "--wait-bound=0")
	want := fmt.Sprintf(`Warning: no member of gang %s/pair carries the scheduling gate "example.com/typo", so --ungate released nothing (the pending members carry %s, %s)`,
		f.ns, gangGate, keepGate)
	if code != cmd.ExitNo || !strings.Contains(stderr, want) || !strings.Contains(out, "Gate example.com/typo removed from 0 member(s); 2 did not have it") {
		t.Errorf("exit %d, stderr %q, output %q; want 3 and the warning %q", code, stderr, out, want)
	}
	for pod, gates := range map[string][]string{"pair-0": {gangGate, keepGate}, "pair-1": {gangGate}} {
		if diff := cmp.Diff(gates, f.podGates(pod)); diff != "" {
			t.Errorf("gates of %s (-want +got):\n%s", pod, diff)
		}
	}

	// The right gate: released, and pair-0 still waits for the other one.
	code, _, stderr = f.run("admit", "podgroup/pair", "--ungate", gangGate, "--wait-bound=0")
	if want := "released members still carry the scheduling gate(s) " + keepGate; code != cmd.ExitOK || !strings.Contains(stderr, want) {
		t.Errorf("exit %d, stderr %q; want 0 and a warning %q", code, stderr, want)
	}
	// Run again: the gate is gone, nothing to release.
	code, _, stderr = f.run("admit", "podgroup/pair", "--ungate", gangGate, "--wait-bound=0")
	if code != cmd.ExitNo || !strings.Contains(stderr, "so --ungate released nothing (the pending members carry "+keepGate+")") {
		t.Errorf("again: exit %d, stderr %q; want 3 and the warning", code, stderr)
	}
}

// grantReader lets user list everything the pipeline reads but
// ResourceQuotas.
func grantReader(t *testing.T, f *gangFixture, user string) {
	t.Helper()
	cs := env.Clientset()
	_, err := cs.RbacV1().ClusterRoles().Create(f.ctx, &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: user},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"nodes", "pods", "namespaces", "persistentvolumeclaims", "persistentvolumes", "services", "replicationcontrollers"}, Verbs: []string{"list"}},
			{APIGroups: []string{"apps", "policy", "storage.k8s.io", "resource.k8s.io", "scheduling.k8s.io", "scheduling.volcano.sh", "scheduling.x-k8s.io"}, Resources: []string{"*"}, Verbs: []string{"list"}},
		},
	}, metav1.CreateOptions{})
	f.must(err)
	_, err = cs.RbacV1().ClusterRoleBindings().Create(f.ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: user},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: user},
		Subjects:   []rbacv1.Subject{{Kind: "User", Name: user}},
	}, metav1.CreateOptions{})
	f.must(err)
}

// runImpersonating runs kubectl gang as user, through the admin's impersonation; RBAC
// takes a moment to see a new binding, so an error exit is tried again.
func (f *gangFixture) runImpersonating(user string, args ...string) (code int, out, stderr string) {
	f.t.Helper()
	for range 100 {
		if code, out, stderr = f.run(append(args, "--as", user)...); code != cmd.ExitError {
			return code, out, stderr
		}
		time.Sleep(100 * time.Millisecond)
	}
	return code, out, stderr
}
