package snapshot

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	resourcev1 "k8s.io/api/resource/v1"
	resourcev1beta2 "k8s.io/api/resource/v1beta2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	fakediscovery "k8s.io/client-go/discovery/fake"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
)

// The Dynamic Resource Allocation kinds are read at v1, else at v1beta2;
// a server that serves resource.k8s.io at other versions only has them
// unreadable, one that does not serve it has none.
func TestDiscoverKindsResourceVersions(t *testing.T) {
	tests := []struct {
		name           string
		versions       []string // served, in the server's order
		taintRules     []string // the versions that serve devicetaintrules
		wantVersion    string
		wantTaintRules string
		wantWarning    string
		wantUnreadable []string
	}{
		{name: "Kubernetes 1.37", versions: []string{"v1", "v1beta2", "v1beta1"}, taintRules: []string{"v1", "v1beta2"}, wantVersion: "v1", wantTaintRules: "v1"},
		{name: "Kubernetes 1.36 with DeviceTaintRules on", versions: []string{"v1", "v1beta2", "v1beta1"}, taintRules: []string{"v1beta2"}, wantVersion: "v1", wantTaintRules: "v1beta2"},
		{name: "Kubernetes 1.34 and later", versions: []string{"v1", "v1beta2", "v1beta1"}, wantVersion: "v1"},
		{name: "Kubernetes 1.33 with the beta APIs on", versions: []string{"v1beta2", "v1beta1"}, wantVersion: "v1beta2"},
		{name: "Kubernetes 1.32", versions: []string{"v1beta1", "v1alpha3"},
			wantWarning: "the server serves resource.k8s.io only at v1beta1, v1alpha3, which this build does not read; device claims are not evaluated",
			wantUnreadable: []string{"deviceclasses.resource.k8s.io", "resourceclaims.resource.k8s.io",
				"resourceclaimtemplates.resource.k8s.io", "resourceslices.resource.k8s.io"}},
		{name: "no Dynamic Resource Allocation"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lists := []*metav1.APIResourceList{{GroupVersion: "v1", APIResources: []metav1.APIResource{{Name: "pods", Verbs: []string{"list"}}}},
				{GroupVersion: "scheduling.volcano.sh/v1beta1", APIResources: []metav1.APIResource{{Name: "queues", Verbs: []string{"list"}}}}}
			for _, v := range tt.versions {
				resources := []metav1.APIResource{{Name: "resourceclaims", Namespaced: true, Verbs: []string{"list"}}}
				if slices.Contains(tt.taintRules, v) {
					resources = append(resources, metav1.APIResource{Name: "devicetaintrules", Verbs: []string{"list"}})
				}
				lists = append(lists, &metav1.APIResourceList{GroupVersion: "resource.k8s.io/" + v, APIResources: resources})
			}
			kinds, warnings, err := discoverKinds(&fakediscovery.FakeDiscovery{Fake: &k8stesting.Fake{Resources: lists}}, "https://test")
			if err != nil || len(warnings) > 0 {
				t.Fatalf("discoverKinds: %v, warnings %v", err, warnings)
			}
			if diff := cmp.Diff([]schema.GroupVersionResource{{Group: "scheduling.volcano.sh", Version: "v1beta1", Resource: "queues"}}, kinds.custom); diff != "" {
				t.Errorf("custom kinds (-want +got):\n%s", diff)
			}
			if got := kinds.draVersion(); got != tt.wantVersion {
				t.Errorf("draVersion() = %q, want %q", got, tt.wantVersion)
			}
			if kinds.taintRules != tt.wantTaintRules {
				t.Errorf("DeviceTaintRules read at %q, want %q", kinds.taintRules, tt.wantTaintRules)
			}
			r := &liveReader{b: newBuilder()}
			tasks, warning := r.draTasks(fake.NewClientset(), kinds)
			wantTasks := map[bool]int{true: 4, false: 0}[tt.wantVersion != ""]
			if tt.wantTaintRules != "" {
				wantTasks++
			}
			if len(tasks) != wantTasks {
				t.Errorf("%d list tasks, want %d", len(tasks), wantTasks)
			}
			if warning != tt.wantWarning {
				t.Errorf("warning %q, want %q", warning, tt.wantWarning)
			}
			if diff := cmp.Diff(tt.wantUnreadable, r.b.snapshot().Unreadable); diff != "" {
				t.Errorf("unreadable (-want +got):\n%s", diff)
			}
		})
	}
}

// draYAML holds one object of each kind, in a form both resource.k8s.io/v1
// and v1beta2 decode (their schemas are the same).
var draYAML = []string{`
metadata: {name: gpu.example.com}
spec:
  selectors: [{cel: {expression: 'device.driver == "gpu.example.com"'}}]
`, `
metadata: {name: node-1-gpu}
spec:
  driver: gpu.example.com
  nodeName: node-1
  pool: {name: node-1, generation: 3, resourceSliceCount: 1}
  devices:
  - name: gpu-0
    attributes:
      model: {string: a100}
      gpu.example.com/index: {int: 0}
      driverVersion: {version: 1.2.3}
    capacity:
      memory: {value: 80Gi}
`, `
metadata: {name: w-0-gpu, namespace: ml}
spec:
  devices:
    requests: [{name: gpu, exactly: {deviceClassName: gpu.example.com, allocationMode: ExactCount, count: 1}}]
status:
  allocation:
    devices:
      results: [{request: gpu, driver: gpu.example.com, pool: node-1, device: gpu-0}]
    nodeSelector:
      nodeSelectorTerms: [{matchFields: [{key: metadata.name, operator: In, values: [node-1]}]}]
  reservedFor: [{resource: pods, name: w-0, uid: uid-w-0}]
`, `
metadata: {name: gpu, namespace: ml}
spec:
  spec:
    devices:
      requests: [{name: gpu, exactly: {deviceClassName: gpu.example.com}}]
`, `
metadata: {name: broken-gpu}
spec:
  deviceSelector: {driver: gpu.example.com, pool: node-1, device: gpu-0}
  taint: {key: example.com/broken, value: ecc, effect: NoSchedule}
`}

// TestDRATasksConvertV1beta2 lists the five kinds from a server that serves
// resource.k8s.io/v1beta2 only, and from one that serves v1: the snapshots
// are the same.
func TestDRATasksConvertV1beta2(t *testing.T) {
	decode := func(objs ...runtime.Object) []runtime.Object {
		for i, obj := range objs {
			if err := yaml.UnmarshalStrict([]byte(draYAML[i]), obj); err != nil {
				t.Fatal(err)
			}
		}
		return objs
	}
	read := func(version string, objs []runtime.Object) *schedule.Snapshot {
		t.Helper()
		r := &liveReader{ctx: context.Background(), pageSize: DefaultPageSize, b: newBuilder(), progress: &Progress{}}
		tasks, _ := r.draTasks(fake.NewClientset(objs...), served{resourceVersions: []string{version}, taintRules: version})
		if warnings := r.run(tasks, len(tasks)); len(warnings) > 0 || len(r.errs) > 0 {
			t.Fatalf("%s: warnings %v, errors %v", version, warnings, r.errs)
		}
		return r.b.snapshot()
	}
	v1 := read("v1", decode(&resourcev1.DeviceClass{}, &resourcev1.ResourceSlice{}, &resourcev1.ResourceClaim{}, &resourcev1.ResourceClaimTemplate{}, &resourcev1.DeviceTaintRule{}))
	v1beta2 := read("v1beta2", decode(&resourcev1beta2.DeviceClass{}, &resourcev1beta2.ResourceSlice{}, &resourcev1beta2.ResourceClaim{}, &resourcev1beta2.ResourceClaimTemplate{}, &resourcev1beta2.DeviceTaintRule{}))
	if got := countsOf(v1); got != (counts{Slices: 1, DeviceClasses: 1, Claims: 1, ClaimTemplates: 1, TaintRules: 1}) {
		t.Fatalf("v1 snapshot: %+v", got)
	}
	if diff := testutil.Diff(v1, v1beta2); diff != "" {
		t.Errorf("v1 and converted v1beta2 snapshots differ (-v1 +v1beta2):\n%s", diff)
	}
	if got := v1beta2.ResourceClaims[0].Status.Allocation.Devices.Results[0].Device; got != "gpu-0" {
		t.Errorf("converted claim's allocated device = %q, want gpu-0", got)
	}
}

// A namespaced kind refused cluster-wide is listed in the command's
// namespaces instead (budgets also where pods are bound): what was read there
// is kept and marked readable (ReadIn), one warning names the namespaces
// read and refused, and a namespace that does not exist is not asked about.
func TestFallbackPerNamespace(t *testing.T) {
	objs := []runtime.Object{
		testutil.MakeNamespace("team"), testutil.MakeNamespace("other"), testutil.MakeNamespace("victims"),
		&corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "q", Namespace: "team"}},
		&corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "q", Namespace: "other"}},
		&policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "b", Namespace: "victims"}},
	}
	cs := fake.NewClientset(objs...)
	allowed := map[string]bool{"resourcequotas/team": true, "poddisruptionbudgets/victims": true}
	var asked []string
	cs.PrependReactor("list", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
		key := a.GetResource().Resource + "/" + a.GetNamespace()
		asked = append(asked, key)
		if allowed[key] {
			return false, nil, nil
		}
		return true, nil, apierrors.NewForbidden(a.GetResource().GroupResource(), "", errors.New("no"))
	})
	r := &liveReader{ctx: context.Background(), pageSize: DefaultPageSize, b: newBuilder(), progress: &Progress{}}
	for _, o := range objs[:3] {
		r.b.addNamespace(o.(*corev1.Namespace))
	}
	r.b.addPod(testutil.MakePod().Namespace("victims").Name("v").Node("n").Obj())
	tasks := []listTask{
		namespaced(schedule.KindResourceQuotas, func(ns string) lister { return listOf(cs.CoreV1().ResourceQuotas(ns).List) },
			func(obj runtime.Object) { r.b.addResourceQuota(obj.(*corev1.ResourceQuota)) }),
		withVictims(namespaced(schedule.KindPodDisruptionBudgets, func(ns string) lister { return listOf(cs.PolicyV1().PodDisruptionBudgets(ns).List) },
			func(obj runtime.Object) { r.b.addPDB(obj.(*policyv1.PodDisruptionBudget)) })),
	}
	if warnings := r.run(tasks, len(tasks)); len(warnings) > 0 || len(r.errs) > 0 {
		t.Fatalf("warnings %v, errors %v", warnings, r.errs)
	}
	warnings := r.fallback([]string{"team", "missing"})
	want := []string{
		"cannot list poddisruptionbudgets.policy in every namespace (Forbidden); read them in namespace(s) victims, but not in team (Forbidden), where what needs them is not evaluated",
		"cannot list resourcequotas in every namespace (Forbidden); read them in namespace(s) team instead",
	}
	if diff := cmp.Diff(want, warnings); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
	snap := r.b.snapshot()
	if len(snap.ResourceQuotas) != 1 || snap.ResourceQuotas[0].Namespace != "team" || len(snap.PodDisruptionBudgets) != 1 {
		t.Errorf("quotas %v, budgets %v: want team's quota and the victims' budget", snap.ResourceQuotas, snap.PodDisruptionBudgets)
	}
	for _, c := range []struct {
		kind, ns string
		want     bool
	}{
		{schedule.KindResourceQuotas, "team", true}, {schedule.KindResourceQuotas, "other", false},
		{schedule.KindPodDisruptionBudgets, "victims", true}, {schedule.KindPodDisruptionBudgets, "team", false},
	} {
		if got := snap.CanRead(c.kind, c.ns); got != c.want {
			t.Errorf("CanRead(%s, %s) = %v, want %v", c.kind, c.ns, got, c.want)
		}
	}
	if slices.Contains(asked, "resourcequotas/missing") || slices.Contains(asked, "resourcequotas/other") {
		t.Errorf("asked %v: only the command's namespaces that exist are read", asked)
	}
}
