package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/cmd"
)

// Users as real clusters have them: a ServiceAccount (authenticated by a
// token from the TokenRequest API, authorized by RBAC) that may list the
// kinds every verb needs cluster-wide (nodes, pods, namespaces, priority
// classes), and the rest only where a Role per namespace allows it
// (docs/design.md#snapshot).

// coreReader is the ClusterRole every reader here gets: the kinds no verb
// can do without.
var coreReader = []rbacv1.PolicyRule{
	{APIGroups: []string{""}, Resources: []string{"nodes", "pods", "namespaces"}, Verbs: []string{"list"}},
	{APIGroups: []string{"scheduling.k8s.io"}, Resources: []string{"priorityclasses"}, Verbs: []string{"list"}},
}

// reader creates ServiceAccount name in the fixture's namespace, binds it to
// clusterRules cluster-wide and to roles[ns] in each namespace ns, waits
// until RBAC lets it list nodes, and returns a kubeconfig for it.
func (f *gangFixture) reader(name string, clusterRules []rbacv1.PolicyRule, roles map[string][]rbacv1.PolicyRule) string {
	f.t.Helper()
	cs := env.Clientset()
	_, err := cs.CoreV1().ServiceAccounts(f.ns).Create(f.ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	f.must(err)
	subject := []rbacv1.Subject{{Kind: "ServiceAccount", Name: name, Namespace: f.ns}}
	clusterName := f.ns + "-" + name
	if clusterRules != nil {
		_, err = cs.RbacV1().ClusterRoles().Create(f.ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: clusterName}, Rules: clusterRules}, metav1.CreateOptions{})
		f.must(err)
		_, err = cs.RbacV1().ClusterRoleBindings().Create(f.ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: clusterName}, Subjects: subject,
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: clusterName}}, metav1.CreateOptions{})
		f.must(err)
		f.t.Cleanup(func() {
			ctx := context.Background()
			_ = cs.RbacV1().ClusterRoleBindings().Delete(ctx, clusterName, metav1.DeleteOptions{})
			_ = cs.RbacV1().ClusterRoles().Delete(ctx, clusterName, metav1.DeleteOptions{})
		})
	}
	for ns, rules := range roles {
		_, err = cs.RbacV1().Roles(ns).Create(f.ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: clusterName}, Rules: rules}, metav1.CreateOptions{})
		f.must(err)
		_, err = cs.RbacV1().RoleBindings(ns).Create(f.ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: clusterName}, Subjects: subject,
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: clusterName}}, metav1.CreateOptions{})
		f.must(err)
	}
	tr, err := cs.CoreV1().ServiceAccounts(f.ns).CreateToken(f.ctx, name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	f.must(err)
	cfg, err := clientcmd.LoadFromFile(env.Kubeconfig)
	f.must(err)
	for _, a := range cfg.AuthInfos {
		a.Token, a.TokenFile, a.ClientCertificateData, a.ClientKeyData = tr.Status.Token, "", nil, nil
	}
	path := filepath.Join(f.t.TempDir(), "kubeconfig-"+name)
	f.must(clientcmd.WriteToFile(*cfg, path))

	// RBAC's informers take a moment to see new bindings: wait until the
	// authorizer allows the first rule of each.
	user := rest.CopyConfig(env.Config)
	user.BearerToken = tr.Status.Token
	ucs := kubernetes.NewForConfigOrDie(user)
	allowed := func(ctx context.Context, ns string, rule rbacv1.PolicyRule) bool {
		r, err := ucs.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
			ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: ns, Verb: "list", Group: rule.APIGroups[0], Resource: rule.Resources[0]}}}, metav1.CreateOptions{})
		return err == nil && r.Status.Allowed
	}
	err = wait.PollUntilContextTimeout(f.ctx, 100*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		if len(clusterRules) > 0 && !allowed(ctx, "", clusterRules[0]) {
			return false, nil
		}
		for ns, rules := range roles {
			if !allowed(ctx, ns, rules[0]) {
				return false, nil
			}
		}
		return true, nil
	})
	f.must(err)
	return path
}

// runAs runs kubectl gang as the user of kubeconfig in the fixture's namespace.
func (f *gangFixture) runAs(kubeconfig string, args ...string) (int, string, string) {
	f.t.Helper()
	return runCLI(f.t, "", append(args, "--kubeconfig", kubeconfig, "-n", f.ns)...)
}

// namespaceReader lists, in a Role, every namespaced kind a snapshot reads
// but those named in except ("resource.group", "" for the core group).
func namespaceReader(except ...string) []rbacv1.PolicyRule {
	kinds := map[string][]string{
		"":                      {"resourcequotas", "persistentvolumeclaims", "services", "replicationcontrollers"},
		"apps":                  {"replicasets", "statefulsets"},
		"policy":                {"poddisruptionbudgets"},
		"scheduling.k8s.io":     {"podgroups"},
		"scheduling.volcano.sh": {"podgroups"},
		"scheduling.x-k8s.io":   {"podgroups"},
	}
	var rules []rbacv1.PolicyRule
	for group, resources := range kinds {
		var kept []string
		for _, r := range resources {
			name := r
			if group != "" {
				name += "." + group
			}
			if !slices.Contains(except, name) {
				kept = append(kept, r)
			}
		}
		if len(kept) > 0 {
			rules = append(rules, listIn(group, kept...))
		}
	}
	slices.SortFunc(rules, func(a, b rbacv1.PolicyRule) int {
		return strings.Compare(a.APIGroups[0]+a.Resources[0], b.APIGroups[0]+b.Resources[0])
	})
	return rules
}

// oneLine folds the wrapped lines of human output, for Contains.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// listIn allows list on resources of group in a Role.
func listIn(group string, resources ...string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{APIGroups: []string{group}, Resources: resources, Verbs: []string{"list"}}
}

type verdictJSON struct {
	Verdict      string   `json:"verdict"`
	Message      string   `json:"message"`
	NotEvaluated []string `json:"notEvaluated"`
}

// A user who may not list resource.k8s.io at all: a GPU pod on nodes whose
// device plugin advertises nvidia.com/gpu is judged by NodeResourcesFit
// alone, as kube-scheduler judges it there, so it is a plain yes; a pod that
// fits none of those nodes might fit where a DeviceClass backs the resource
// (a node that does not advertise it), so the "no" says what was not
// evaluated, and a pod with claims is never a yes.
func TestReadRightsDRA(t *testing.T) {
	f := newGangFixture(t, "rr-dra")
	gpu := f.node("gpu", gpuNode)
	f.node("cpu", testutil.Res{"cpu": "32", "memory": "256Gi", "pods": "110"})
	kubeconfig := f.reader("no-dra", coreReader, map[string][]rbacv1.PolicyRule{f.ns: namespaceReader()})

	t.Run("device plugin GPUs are evaluated", func(t *testing.T) {
		code, out, stderr := f.runAs(kubeconfig, "place", "-f", f.file("pod.yaml", f.gpuPod("w")), "-o", "json")
		var p placementJSON
		decodeVerdict(t, code, out, stderr, &p)
		var v verdictJSON
		f.must(json.Unmarshal([]byte(out), &v))
		if code != cmd.ExitOK || p.Verdict != "Placed" || len(v.NotEvaluated) > 0 {
			t.Errorf("exit %d, verdict %s, not evaluated %v; want 0, Placed, everything evaluated", code, p.Verdict, v.NotEvaluated)
		}
		if len(p.Assignments) != 1 || p.Assignments[0].Node != gpu {
			t.Errorf("assignments %+v, want the pod on %s", p.Assignments, gpu)
		}
		if !strings.Contains(stderr, "cannot list deviceclasses.resource.k8s.io (Forbidden)") {
			t.Errorf("stderr %q does not say DeviceClasses could not be listed", stderr)
		}
	})
	t.Run("more GPUs than any node advertises", func(t *testing.T) {
		code, out, stderr := f.runAs(kubeconfig, "place", "-f", f.file("pod.yaml", f.podManifest("big",
			`{requests: {cpu: "1", nvidia.com/gpu: "16"}, limits: {nvidia.com/gpu: "16"}}`)), "-o", "json")
		var v verdictJSON
		decodeVerdict(t, code, out, stderr, &v)
		if code != cmd.ExitNo || v.Verdict == "Placed" || len(v.NotEvaluated) != 1 || !strings.Contains(v.NotEvaluated[0], "node(s) did not advertise nvidia.com/gpu, which a DeviceClass may back there; DeviceClasses could not be listed (1 node(s))") {
			t.Errorf("exit %d, verdict %s, not evaluated %v; want 3 with nvidia.com/gpu not evaluated on the CPU node", code, v.Verdict, v.NotEvaluated)
		}
	})
	t.Run("claims", func(t *testing.T) {
		code, out, stderr := f.runAs(kubeconfig, "place", "-f", f.file("pod.yaml", f.podManifest("claims", `{requests: {cpu: "1"}, claims: [{name: gpu}]}`)+
			"  resourceClaims: [{name: gpu, resourceClaimTemplateName: gpu}]\n"), "-o", "json")
		var v verdictJSON
		decodeVerdict(t, code, out, stderr, &v)
		if code != cmd.ExitNo || len(v.NotEvaluated) == 0 || !strings.Contains(strings.Join(v.NotEvaluated, " "), `resource claim(s) "gpu"`) {
			t.Errorf("exit %d, verdict %s, not evaluated %v; want 3 with the claim not evaluated", code, v.Verdict, v.NotEvaluated)
		}
	})
}

// A user who may list ResourceQuotas in the gang's namespace only: the quota
// there is read namespace by namespace and decides (it was ignored); a user
// who may not list them there either gets no yes.
func TestReadRightsResourceQuota(t *testing.T) {
	f := newGangFixture(t, "rr-quota")
	f.nodes(1)
	f.quota("gpus", corev1.ResourceQuotaSpec{Hard: testutil.Res{"requests.nvidia.com/gpu": "8"}.List()}, testutil.Res{"requests.nvidia.com/gpu": "4"})
	job := f.file("pod.yaml", f.gpuPod("w")) // 8 GPUs, 4 left in the quota

	t.Run("namespaced reader", func(t *testing.T) {
		kubeconfig := f.reader("quota-reader", coreReader, map[string][]rbacv1.PolicyRule{f.ns: namespaceReader()})
		code, out, stderr := f.runAs(kubeconfig, "explain", "-f", job)
		out = oneLine(out)
		if code != cmd.ExitNo || !strings.Contains(out, "exceeded quota: gpus") {
			t.Errorf("exit %d, stdout %q; want 3 and the quota's refusal", code, out)
		}
		want := fmt.Sprintf("Warning: cannot list resourcequotas in every namespace (Forbidden); read them in namespace(s) %s instead", f.ns)
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr %q lacks %q", stderr, want)
		}
	})
	t.Run("no reader in the namespace", func(t *testing.T) {
		kubeconfig := f.reader("no-quota", coreReader, map[string][]rbacv1.PolicyRule{f.ns: namespaceReader("resourcequotas")})
		code, out, stderr := f.runAs(kubeconfig, "explain", "-f", job)
		out = oneLine(out)
		if code != cmd.ExitNo || !strings.Contains(out, "Unverified") || !strings.Contains(out, "ResourceQuotas of namespace "+f.ns+" could not be listed") {
			t.Errorf("exit %d, stdout %q; want 3, Unverified, the quota not evaluated", code, out)
		}
		want := fmt.Sprintf("Warning: cannot list resourcequotas in every namespace (Forbidden), nor in namespace(s) %s", f.ns)
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr %q lacks %q", stderr, want)
		}
		code, out, _ = f.runAs(kubeconfig, "place", "-f", job)
		if code != cmd.ExitNo || !strings.Contains(out, "not verified") {
			t.Errorf("place: exit %d, stdout %q; want 3, not verified", code, out)
		}
	})
}

// Default topology spreading takes a pod's selector from the Services and
// controllers of its namespace: read there namespace by namespace, the plan
// is a plain yes; unread there, it is not verified (it was silently placed
// as if nothing selected the pod).
func TestReadRightsSpreadingSelectors(t *testing.T) {
	f := newGangFixture(t, "rr-spread")
	f.nodes(2)
	pod := f.file("pod.yaml", f.podManifest("web", `{requests: {cpu: "1"}}`))
	kubeconfig := f.reader("selectors", coreReader, map[string][]rbacv1.PolicyRule{f.ns: namespaceReader()})
	code, out, stderr := f.runAs(kubeconfig, "place", "-f", pod)
	if code != cmd.ExitOK || strings.Contains(out, "not verified") {
		t.Errorf("reader of the namespace: exit %d, stdout %q, stderr %q; want a plain yes", code, out, stderr)
	}
	kubeconfig = f.reader("no-selectors", coreReader, map[string][]rbacv1.PolicyRule{f.ns: namespaceReader(
		"services", "replicationcontrollers", "replicasets.apps", "statefulsets.apps")})
	code, out, stderr = f.runAs(kubeconfig, "place", "-f", pod, "-o", "json")
	var v verdictJSON
	decodeVerdict(t, code, out, stderr, &v)
	if code != cmd.ExitNo || len(v.NotEvaluated) != 1 || !strings.Contains(v.NotEvaluated[0], "could not list services, replicationcontrollers, replicasets.apps, statefulsets.apps there") {
		t.Errorf("exit %d, not evaluated %v; want 3 with default spreading not evaluated", code, v.NotEvaluated)
	}
}

// PodDisruptionBudgets rank preemption's victims: read in the victims'
// namespace, the preemption what-if counts the budget it breaks (it was
// ignored); unread there, it says the choice of victims is not verified.
func TestReadRightsDisruptionBudgets(t *testing.T) {
	f := newGangFixture(t, "rr-pdb")
	node := f.node("n0", testutil.Res{"cpu": "4", "memory": "8Gi", "pods": "110"})
	victims := f.ns + "-victims"
	_, err := env.Clientset().CoreV1().Namespaces().Create(f.ctx, testutil.MakeNamespace(victims), metav1.CreateOptions{})
	f.must(err)
	high := f.ns + "-high"
	_, err = env.Clientset().SchedulingV1().PriorityClasses().Create(f.ctx, &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: high}, Value: 1000}, metav1.CreateOptions{})
	f.must(err)
	t.Cleanup(func() {
		_ = env.Clientset().SchedulingV1().PriorityClasses().Delete(context.Background(), high, metav1.DeleteOptions{})
	})
	running := f.pod("batch", testutil.Res{"cpu": "3"}).Label("app", "batch").Obj()
	running.Namespace, running.Spec.NodeName = victims, node
	_, err = env.Clientset().CoreV1().Pods(victims).Create(f.ctx, running, metav1.CreateOptions{})
	f.must(err)
	_, err = env.Clientset().PolicyV1().PodDisruptionBudgets(victims).Create(f.ctx, &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "batch"},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: ptrIntOrString(1), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "batch"}}}}, metav1.CreateOptions{})
	f.must(err)
	urgent := f.file("pod.yaml", f.podManifest("urgent", `{requests: {cpu: "3"}}`)+"  priorityClassName: "+high+"\n")

	kubeconfig := f.reader("budgets", coreReader, map[string][]rbacv1.PolicyRule{f.ns: namespaceReader(), victims: {listIn("policy", "poddisruptionbudgets")}})
	code, out, stderr := f.runAs(kubeconfig, "explain", "-f", urgent)
	out = oneLine(out)
	if code != cmd.ExitNo || !strings.Contains(out, "preempting") || !strings.Contains(out, "1 of them beyond what a PodDisruptionBudget allows") {
		t.Errorf("reader of the victims' namespace: exit %d, stdout %q, stderr %q; want the preemption to count the budget", code, out, stderr)
	}
	kubeconfig = f.reader("no-budgets", coreReader, map[string][]rbacv1.PolicyRule{f.ns: namespaceReader()})
	code, out, stderr = f.runAs(kubeconfig, "explain", "-f", urgent)
	out = oneLine(out)
	if code != cmd.ExitNo || !strings.Contains(out, "not verified which victims kube-scheduler picks: the PodDisruptionBudgets of namespace(s) "+victims+" could not be listed") {
		t.Errorf("no reader: exit %d, stdout %q; want the choice of victims not verified", code, out)
	}
	// The victims' namespace is where budgets matter, besides the gang's.
	if want := "Warning: cannot list poddisruptionbudgets.policy in every namespace (Forbidden); read them in namespace(s) " + f.ns + ", but not in "; !strings.Contains(stderr, want) {
		t.Errorf("stderr %q lacks %q", stderr, want)
	}
}

func ptrIntOrString(i int) *intstr.IntOrString {
	v := intstr.FromInt(i)
	return &v
}

// A user who may not list the kinds every verb needs gets one line naming
// them and exit 1 (an API error: the server refused, and no fallback can
// answer for every node and pod), never a verdict.
func TestReadRightsRequiredKinds(t *testing.T) {
	f := newGangFixture(t, "rr-core")
	kubeconfig := f.reader("pods-only", []rbacv1.PolicyRule{listIn("", "pods", "namespaces"), listIn("scheduling.k8s.io", "priorityclasses")}, nil)
	code, out, stderr := f.runAs(kubeconfig, "place", "-f", f.file("pod.yaml", f.podManifest("p", `{requests: {cpu: "1"}}`)))
	wantErrorLine(t, cmd.ExitError, code, out, stderr, "error: cannot list nodes (nodes is forbidden: User \"system:serviceaccount:"+f.ns+":pods-only\" cannot list resource \"nodes\"",
		"every verb needs the cluster's nodes, pods, namespaces and priority classes")

	kubeconfig = f.reader("nothing", nil, nil)
	code, out, stderr = runCLI(t, "", "snapshot", "--kubeconfig", kubeconfig)
	wantErrorLine(t, cmd.ExitError, code, out, stderr, "error: cannot list namespaces, nodes, pods, priorityclasses.scheduling.k8s.io (")
}

// A user who may list pods but not native PodGroups (issue #42): the pods
// name a PodGroup the snapshot could not read, which is "could not be read"
// (not evaluated, exit 3), never "does not exist, create it".
func TestReadRightsPodGroups(t *testing.T) {
	f := newGangFixture(t, "rr-podgroups")
	f.nodes(2)
	f.nativePodGroup("g3", 3)
	for i := range 3 {
		f.create(f.pod(fmt.Sprintf("g3-%d", i), halfNode).PodGroup("g3").Obj())
	}
	kubeconfig := f.reader("no-podgroups", coreReader, map[string][]rbacv1.PolicyRule{f.ns: namespaceReader("podgroups.scheduling.k8s.io")})
	const unread = "could not be read (the list of podgroups.scheduling.k8s.io was refused)"

	code, out, stderr := f.runAs(kubeconfig, "explain", "pod/g3-0", "-o", "json")
	var v verdictJSON
	decodeVerdict(t, code, out, stderr, &v)
	if code != cmd.ExitNo || v.Verdict != "Unverified" || len(v.NotEvaluated) != 1 || !strings.Contains(v.NotEvaluated[0], unread) {
		t.Errorf("explain pod/g3-0: exit %d, verdict %s, not evaluated %q; want 3, Unverified: the PodGroup %s", code, v.Verdict, v.NotEvaluated, unread)
	}
	if strings.Contains(out, "create podgroups") || strings.Contains(out, "does not exist") {
		t.Errorf("explain pod/g3-0 tells the user to create a PodGroup it could not read:\n%s", out)
	}
	if !strings.Contains(stderr, "cannot list podgroups.scheduling.k8s.io in every namespace (Forbidden), nor in namespace(s) "+f.ns) {
		t.Errorf("stderr %q does not say PodGroups could not be listed", stderr)
	}

	for _, verb := range []string{"explain", "place", "admit"} {
		code, out, stderr := f.runAs(kubeconfig, verb, "podgroup/g3")
		wantErrorLine(t, cmd.ExitNo, code, out, stderr, `error: podgroups "g3" in namespace "`+f.ns+`" could not be read: the list of podgroups.scheduling.k8s.io was refused, so whether it exists is unknown`)
	}
}
