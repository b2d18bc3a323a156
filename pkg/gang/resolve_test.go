package gang_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
	"github.com/kubectl-gang/kubectl-gang/pkg/systems/coscheduling"
	"github.com/kubectl-gang/kubectl-gang/pkg/systems/kueue"
	"github.com/kubectl-gang/kubectl-gang/pkg/systems/volcano"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// member makes a pending pod in ml created at t0+sec.
func member(name string, sec int) *testutil.PodWrapper {
	return testutil.MakePod().Namespace("ml").Name(name).Created(t0.Add(time.Duration(sec) * time.Second))
}

func snapshotOf(pods []*corev1.Pod, groups ...*unstructured.Unstructured) *schedule.Snapshot {
	s := &schedule.Snapshot{Pods: pods, PodGroups: groups}
	s.Sort()
	return s
}

func TestResolvePodGroup(t *testing.T) {
	// Members come back in queue order: priority, then creation time, then name.
	nativeA := member("a", 2).PodGroup("train").Obj()
	nativeB := member("b", 1).PodGroup("train").Obj()
	nativeHigh := member("c", 3).PodGroup("train").Priority("high", 100).Obj()
	nativeElsewhere := member("x", 0).Namespace("other").PodGroup("train").Obj()
	volcano0 := member("v-0", 0).VolcanoGroup("train").VolcanoTask("worker").Obj()
	volcano1 := member("v-1", 0).VolcanoGroup("train").VolcanoTask("ps").Obj()
	cosched := member("c-0", 0).CoschedulingGroup("train").Obj()
	pods := []*corev1.Pod{nativeA, nativeB, nativeHigh, nativeElsewhere, volcano0, volcano1, cosched}

	nativePG := testutil.MakeNativePodGroup("ml", "train", 3).TopologyKey("topology.kubernetes.io/zone").Obj()
	volcanoPG := testutil.MakeVolcanoPodGroup("ml", "train", 2).MinTaskMember(map[string]int64{"worker": 1, "ps": 1}).
		MinResources(testutil.Res{"cpu": "4", "nvidia.com/gpu": "2"}).Obj()
	coschedPG := testutil.MakeCoschedulingPodGroup("ml", "train", 1).MinResources(testutil.Res{"memory": "1Gi"}).Obj()
	volcanoTopologyPG := testutil.MakeVolcanoPodGroup("ml", "train", 0).Queue("research").
		Field(map[string]any{"mode": "hard", "highestTierAllowed": int64(1)}, "networkTopology").Obj()
	unstructured.RemoveNestedField(volcanoTopologyPG.Object, "spec", "minMember")
	volcanoNumbersPG := testutil.MakeVolcanoPodGroup("ml", "train", 0).Field(2.0, "minMember").
		Field(map[string]any{"cpu": int64(4), "memory": 1.5}, "minResources").Obj()

	tests := []struct {
		name    string
		pods    []*corev1.Pod
		groups  []*unstructured.Unstructured
		ref     gang.Ref
		want    *gang.Gang
		wantErr string
	}{
		{
			name:   "native gang with topology",
			pods:   pods,
			groups: []*unstructured.Unstructured{nativePG},
			ref:    gang.Ref{Namespace: "ml", Name: "train"},
			want: &gang.Gang{Source: gang.SourceNative, Namespace: "ml", Name: "train", PodGroup: nativePG, MinMember: 3,
				TopologyKey: "topology.kubernetes.io/zone", Members: []*corev1.Pod{nativeHigh, nativeB, nativeA}},
		},
		{
			name:   "native basic policy needs one member",
			groups: []*unstructured.Unstructured{testutil.MakeNativeBasicPodGroup("ml", "train").Obj()},
			ref:    gang.Ref{Namespace: "ml", Name: "train"},
			want: &gang.Gang{Source: gang.SourceNative, Namespace: "ml", Name: "train",
				PodGroup: testutil.MakeNativeBasicPodGroup("ml", "train").Obj(), MinMember: 1},
		},
		{
			name:    "native gang without minCount",
			groups:  []*unstructured.Unstructured{testutil.MakeNativeBasicPodGroup("ml", "train").Field(map[string]any{}, "schedulingPolicy", "gang").Obj()},
			ref:     gang.Ref{Namespace: "ml", Name: "train"},
			wantErr: "podgroups.scheduling.k8s.io ml/train: spec.schedulingPolicy: must set exactly one of basic and gang, both are set",
		},
		{
			name:    "native gang minCount missing",
			groups:  []*unstructured.Unstructured{testutil.MakeNativePodGroup("ml", "train", 1).Field(map[string]any{}, "schedulingPolicy", "gang").Obj()},
			ref:     gang.Ref{Namespace: "ml", Name: "train"},
			wantErr: "podgroups.scheduling.k8s.io ml/train: spec.schedulingPolicy.gang.minCount: is required",
		},
		{
			name:    "native gang minCount zero",
			groups:  []*unstructured.Unstructured{testutil.MakeNativePodGroup("ml", "train", 0).Obj()},
			ref:     gang.Ref{Namespace: "ml", Name: "train"},
			wantErr: "podgroups.scheduling.k8s.io ml/train: spec.schedulingPolicy.gang.minCount: must be at least 1, got 0",
		},
		{
			name: "native two topology constraints",
			groups: []*unstructured.Unstructured{testutil.MakeNativePodGroup("ml", "train", 1).
				Field([]any{map[string]any{"key": "a"}, map[string]any{"key": "b"}}, "schedulingConstraints", "topology").Obj()},
			ref:     gang.Ref{Namespace: "ml", Name: "train"},
			wantErr: "podgroups.scheduling.k8s.io ml/train: spec.schedulingConstraints.topology: holds 2 constraints; only one is supported",
		},
		{
			name: "native topology key not a string",
			groups: []*unstructured.Unstructured{testutil.MakeNativePodGroup("ml", "train", 1).
				Field([]any{map[string]any{"key": int64(3)}}, "schedulingConstraints", "topology").Obj()},
			ref:     gang.Ref{Namespace: "ml", Name: "train"},
			wantErr: "podgroups.scheduling.k8s.io ml/train: spec.schedulingConstraints.topology[0].key: must be a string, got int64 3",
		},
		{
			name:   "volcano with tasks and resources, default queue",
			pods:   pods,
			groups: []*unstructured.Unstructured{volcanoPG},
			ref:    gang.Ref{Namespace: "ml", Name: "train"},
			want: &gang.Gang{Source: volcano.Source, Namespace: "ml", Name: "train", PodGroup: volcanoPG, MinMember: 2,
				MinTaskMember: map[string]int32{"worker": 1, "ps": 1},
				MinResources:  testutil.Res{"cpu": "4", "nvidia.com/gpu": "2"}.List(),
				Queue:         "default", Members: []*corev1.Pod{volcano0, volcano1}},
		},
		{
			name:   "volcano without minMember has no minimum; network topology is not evaluated",
			groups: []*unstructured.Unstructured{volcanoTopologyPG},
			ref:    gang.Ref{Namespace: "ml", Name: "train"},
			want: &gang.Gang{Source: volcano.Source, Namespace: "ml", Name: "train", Queue: "research", PodGroup: volcanoTopologyPG,
				NotEvaluatedFields: []gang.NotEvaluatedField{{Field: "spec.networkTopology", Value: "mode=hard highestTierAllowed=1",
					Reason: "Volcano places network topologies on HyperNodes, which the snapshot does not hold; " +
						"give --topology-key LABEL to keep the gang within one value of a node label instead"}}},
		},
		{
			name:    "volcano minMember is a string",
			groups:  []*unstructured.Unstructured{testutil.MakeVolcanoPodGroup("ml", "train", 0).Field("3", "minMember").Obj()},
			ref:     gang.Ref{Namespace: "ml", Name: "train"},
			wantErr: `podgroups.scheduling.volcano.sh ml/train: spec.minMember: must be an integer, got string "3"`,
		},
		{
			name:    "volcano minMember negative",
			groups:  []*unstructured.Unstructured{testutil.MakeVolcanoPodGroup("ml", "train", -1).Obj()},
			ref:     gang.Ref{Namespace: "ml", Name: "train"},
			wantErr: "podgroups.scheduling.volcano.sh ml/train: spec.minMember: must not be negative, got -1",
		},
		{
			name:    "volcano minMember fractional",
			groups:  []*unstructured.Unstructured{testutil.MakeVolcanoPodGroup("ml", "train", 0).Field(2.5, "minMember").Obj()},
			ref:     gang.Ref{Namespace: "ml", Name: "train"},
			wantErr: "podgroups.scheduling.volcano.sh ml/train: spec.minMember: must be an integer, got 2.5",
		},
		{
			name:    "volcano minTaskMember negative",
			groups:  []*unstructured.Unstructured{testutil.MakeVolcanoPodGroup("ml", "train", 1).MinTaskMember(map[string]int64{"ps": -2}).Obj()},
			ref:     gang.Ref{Namespace: "ml", Name: "train"},
			wantErr: "podgroups.scheduling.volcano.sh ml/train: spec.minTaskMember.ps: must not be negative, got -2",
		},
		{
			name:    "volcano bad quantity",
			groups:  []*unstructured.Unstructured{testutil.MakeVolcanoPodGroup("ml", "train", 1).MinResources(testutil.Res{"cpu": "lots"}).Obj()},
			ref:     gang.Ref{Namespace: "ml", Name: "train"},
			wantErr: `podgroups.scheduling.volcano.sh ml/train: spec.minResources.cpu: invalid quantity "lots": quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`,
		},
		{
			name:    "volcano bad network topology mode",
			groups:  []*unstructured.Unstructured{testutil.MakeVolcanoPodGroup("ml", "train", 1).Field("strict", "networkTopology", "mode").Obj()},
			ref:     gang.Ref{Namespace: "ml", Name: "train"},
			wantErr: `podgroups.scheduling.volcano.sh ml/train: spec.networkTopology.mode: must be "hard" or "soft", got "strict"`,
		},
		{
			name: "volcano spec not an object",
			groups: []*unstructured.Unstructured{func() *unstructured.Unstructured {
				u := testutil.MakeVolcanoPodGroup("ml", "train", 1).Obj()
				u.Object["spec"] = "x"
				return u
			}()},
			ref:     gang.Ref{Namespace: "ml", Name: "train"},
			wantErr: `podgroups.scheduling.volcano.sh ml/train: spec: must be an object, got string "x"`,
		},
		{
			name:   "coscheduling",
			pods:   pods,
			groups: []*unstructured.Unstructured{coschedPG},
			ref:    gang.Ref{Namespace: "ml", Name: "train"},
			want: &gang.Gang{Source: coscheduling.Source, Namespace: "ml", Name: "train", PodGroup: coschedPG, MinMember: 1,
				MinResources: testutil.Res{"memory": "1Gi"}.List(), Members: []*corev1.Pod{cosched}},
		},
		{
			name:   "a group picks one of several",
			pods:   pods,
			groups: []*unstructured.Unstructured{nativePG, volcanoPG, coschedPG},
			ref:    gang.Ref{Namespace: "ml", Name: "train", Group: "scheduling.x-k8s.io"},
			want: &gang.Gang{Source: coscheduling.Source, Namespace: "ml", Name: "train", PodGroup: coschedPG, MinMember: 1,
				MinResources: testutil.Res{"memory": "1Gi"}.List(), Members: []*corev1.Pod{cosched}},
		},
		{
			name:    "ambiguous",
			groups:  []*unstructured.Unstructured{coschedPG, volcanoPG},
			ref:     gang.Ref{Namespace: "ml", Name: "train"},
			wantErr: `podgroup "train" in namespace "ml" exists in 2 API groups; name one of: podgroups.scheduling.volcano.sh/train, podgroups.scheduling.x-k8s.io/train`,
		},
		{
			name:   "the newer version of one group wins",
			groups: []*unstructured.Unstructured{withAPIVersion(testutil.MakeNativePodGroup("ml", "train", 5).Obj(), "scheduling.k8s.io/v1alpha2"), nativePG},
			ref:    gang.Ref{Namespace: "ml", Name: "train"},
			want: &gang.Gang{Source: gang.SourceNative, Namespace: "ml", Name: "train", PodGroup: nativePG, MinMember: 3,
				TopologyKey: "topology.kubernetes.io/zone"},
		},
		{
			name:    "no PodGroups at all",
			ref:     gang.Ref{Namespace: "ml", Name: "train"},
			wantErr: `podgroups "train" not found in namespace "ml"; the snapshot holds no PodGroups of any kind (scheduling.k8s.io, scheduling.volcano.sh, scheduling.x-k8s.io): is a gang scheduler installed, and may you list its PodGroups?`,
		},
		{
			name:    "no Volcano installed",
			groups:  []*unstructured.Unstructured{coschedPG},
			ref:     gang.Ref{Namespace: "ml", Name: "train", Group: "scheduling.volcano.sh"},
			wantErr: `podgroups.scheduling.volcano.sh "train" not found in namespace "ml"; the snapshot holds no scheduling.volcano.sh PodGroups (is Volcano installed?); PodGroups in the snapshot: scheduling.x-k8s.io 1`,
		},
		{
			name:    "no native PodGroups",
			groups:  []*unstructured.Unstructured{coschedPG},
			ref:     gang.Ref{Namespace: "ml", Name: "train", Group: "scheduling.k8s.io"},
			wantErr: `podgroups.scheduling.k8s.io "train" not found in namespace "ml"; the snapshot holds no scheduling.k8s.io PodGroups (native PodGroups need the GenericWorkload feature, off by default in Kubernetes v1.37); PodGroups in the snapshot: scheduling.x-k8s.io 1`,
		},
		{
			name:   "quantities written as numbers",
			groups: []*unstructured.Unstructured{volcanoNumbersPG},
			ref:    gang.Ref{Namespace: "ml", Name: "train"},
			want: &gang.Gang{Source: volcano.Source, Namespace: "ml", Name: "train", PodGroup: volcanoNumbersPG, MinMember: 2,
				MinResources: testutil.Res{"cpu": "4", "memory": "1.5"}.List(), Queue: "default"},
		},
		{
			name:    "in another namespace",
			groups:  []*unstructured.Unstructured{coschedPG, testutil.MakeVolcanoPodGroup("dev", "train", 1).Obj()},
			ref:     gang.Ref{Namespace: "prod", Name: "train"},
			wantErr: `podgroups "train" not found in namespace "prod"; PodGroups in the snapshot: scheduling.volcano.sh 1, scheduling.x-k8s.io 1; a PodGroup named "train" exists in namespace "dev", "ml"`,
		},
		{
			name:    "unknown group",
			ref:     gang.Ref{Namespace: "ml", Name: "train", Group: "example.com"},
			wantErr: `unknown PodGroup API group "example.com": kubectl-gang reads PodGroups of scheduling.k8s.io, scheduling.volcano.sh, scheduling.x-k8s.io`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := gang.ResolvePodGroup(snapshotOf(tt.pods, tt.groups...), tt.ref)
			testutil.CheckErr(t, err, tt.wantErr)
			if diff := testutil.Diff(tt.want, got); diff != "" {
				t.Errorf("ResolvePodGroup (-want +got):\n%s", diff)
			}
		})
	}
}

func withAPIVersion(u *unstructured.Unstructured, apiVersion string) *unstructured.Unstructured {
	u.SetAPIVersion(apiVersion)
	return u
}

func TestResolvePodGroupErrorTypes(t *testing.T) {
	snap := snapshotOf(nil, testutil.MakeVolcanoPodGroup("ml", "train", 1).Obj(), testutil.MakeCoschedulingPodGroup("ml", "train", 1).Obj())
	_, err := gang.ResolvePodGroup(snap, gang.Ref{Namespace: "ml", Name: "train"})
	var amb *gang.AmbiguousError
	if !errors.As(err, &amb) || len(amb.Choices) != 2 {
		t.Errorf("got %v, want an *AmbiguousError with two choices", err)
	}
	_, err = gang.ResolvePodGroup(snap, gang.Ref{Namespace: "ml", Name: "other"})
	var nf *gang.NotFoundError
	if !errors.As(err, &nf) || nf.Name != "other" || nf.Resource != "podgroups" {
		t.Errorf("got %v, want a *NotFoundError for podgroups/other", err)
	}
}

func TestResolveSelector(t *testing.T) {
	a := member("a", 1).Label("app", "train").Obj()
	b := member("b", 0).Label("app", "train").Obj()
	other := member("c", 0).Namespace("dev").Label("app", "train").Obj()
	unlabelled := member("d", 0).Obj()
	snap := snapshotOf([]*corev1.Pod{a, b, other, unlabelled})
	sel := labels.SelectorFromSet(labels.Set{"app": "train"})
	tests := []struct {
		name      string
		namespace string
		sel       labels.Selector
		minMember int32
		want      *gang.Gang
		wantErr   string
	}{
		{
			name: "every match must run", namespace: "ml", sel: sel,
			want: &gang.Gang{Source: gang.SourceSelector, Namespace: "ml", Name: "app=train", MinMember: 2, Members: []*corev1.Pod{b, a}},
		},
		{
			name: "min-member", namespace: "ml", sel: sel, minMember: 1,
			want: &gang.Gang{Source: gang.SourceSelector, Namespace: "ml", Name: "app=train", MinMember: 1, Members: []*corev1.Pod{b, a}},
		},
		{
			name: "min-member above the matches is accepted", namespace: "ml", sel: sel, minMember: 5,
			want: &gang.Gang{Source: gang.SourceSelector, Namespace: "ml", Name: "app=train", MinMember: 5, Members: []*corev1.Pod{b, a}},
		},
		{
			name: "every namespace", sel: sel,
			want: &gang.Gang{Source: gang.SourceSelector, Name: "app=train", MinMember: 3, Members: []*corev1.Pod{other, b, a}},
		},
		{
			name: "no match", namespace: "ml", sel: labels.SelectorFromSet(labels.Set{"app": "serve"}),
			wantErr: `no pods match selector "app=serve" in namespace "ml"; the snapshot holds only pods that have not finished (Succeeded and Failed pods are left out)`,
		},
		{name: "no selector", namespace: "ml", wantErr: "no label selector given"},
		{name: "negative min-member", namespace: "ml", sel: sel, minMember: -1, wantErr: "--min-member must not be negative, got -1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := gang.ResolveSelector(snap, tt.namespace, tt.sel, tt.minMember)
			testutil.CheckErr(t, err, tt.wantErr)
			if diff := testutil.Diff(tt.want, got); diff != "" {
				t.Errorf("ResolveSelector (-want +got):\n%s", diff)
			}
		})
	}
}

func TestResolvePod(t *testing.T) {
	native := member("n-0", 0).PodGroup("train").Obj()
	vcPod := member("v-0", 0).VolcanoGroup("vc").Obj()
	cosched := member("c-0", 0).CoschedulingGroup("cs").Obj()
	orphan := member("o-0", 0).CoschedulingGroup("gone").Obj()
	// Names a native group that is missing and a Volcano one that exists.
	both := member("b-0", 0).PodGroup("missing").VolcanoGroup("vc").Obj()
	plain := member("p-0", 0).Obj()
	nativePG := testutil.MakeNativePodGroup("ml", "train", 1).Obj()
	volcanoPG := testutil.MakeVolcanoPodGroup("ml", "vc", 1).Obj()
	coschedPG := testutil.MakeCoschedulingPodGroup("ml", "cs", 1).Obj()
	snap := snapshotOf([]*corev1.Pod{native, vcPod, cosched, orphan, both, plain}, nativePG, volcanoPG, coschedPG)

	tests := []struct {
		name     string
		pod      string
		wantPod  *corev1.Pod
		wantGang *gang.Gang
		wantErr  string
	}{
		{name: "native member", pod: "n-0", wantPod: native,
			wantGang: &gang.Gang{Source: gang.SourceNative, Namespace: "ml", Name: "train", PodGroup: nativePG, MinMember: 1, Members: []*corev1.Pod{native}}},
		{name: "vcPod member", pod: "v-0", wantPod: vcPod,
			wantGang: &gang.Gang{Source: volcano.Source, Namespace: "ml", Name: "vc", PodGroup: volcanoPG, MinMember: 1, Queue: "default", Members: []*corev1.Pod{both, vcPod}}},
		{name: "coscheduling member", pod: "c-0", wantPod: cosched,
			wantGang: &gang.Gang{Source: coscheduling.Source, Namespace: "ml", Name: "cs", PodGroup: coschedPG, MinMember: 1, Members: []*corev1.Pod{cosched}}},
		{name: "first existing group wins", pod: "b-0", wantPod: both,
			wantGang: &gang.Gang{Source: volcano.Source, Namespace: "ml", Name: "vc", PodGroup: volcanoPG, MinMember: 1, Queue: "default", Members: []*corev1.Pod{both, vcPod}}},
		{name: "no group", pod: "p-0", wantPod: plain},
		{name: "group missing", pod: "o-0", wantPod: orphan,
			wantErr: `podgroups.scheduling.x-k8s.io "gone" not found in namespace "ml"; pod ml/o-0 names it; PodGroups in the snapshot: scheduling.k8s.io 1, scheduling.volcano.sh 1, scheduling.x-k8s.io 1`},
		{name: "no such pod", pod: "zz",
			wantErr: `pods "zz" not found in namespace "ml"; the snapshot holds only pods that have not finished (Succeeded and Failed pods are left out)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, pod, err := gang.ResolvePod(snap, "ml", tt.pod)
			testutil.CheckErr(t, err, tt.wantErr)
			if pod != tt.wantPod {
				t.Errorf("got pod %v, want %v", pod, tt.wantPod)
			}
			if diff := testutil.Diff(tt.wantGang, g); diff != "" {
				t.Errorf("ResolvePod gang (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSetTopologyKey(t *testing.T) {
	snap := snapshotOf(nil, testutil.MakeVolcanoPodGroup("ml", "train", 1).Field(map[string]any{"mode": "soft"}, "networkTopology").
		Field([]any{map[string]any{"name": "s"}}, "subGroupPolicy").Obj())
	g, err := gang.ResolvePodGroup(snap, gang.Ref{Namespace: "ml", Name: "train"})
	if err != nil {
		t.Fatal(err)
	}
	if len(g.NotEvaluatedFields) != 2 || g.NotEvaluatedFields[0].Value != "mode=soft" || g.NotEvaluatedFields[1].Field != "spec.subGroupPolicy" {
		t.Fatalf("NotEvaluatedField = %+v", g.NotEvaluatedFields)
	}
	g.SetTopologyKey("rack")
	want := []gang.NotEvaluatedField{{Field: "spec.subGroupPolicy", Value: "1 sub-group policies",
		Reason: "sub-group gangs (minSubGroups, per-sub-group topology) are not evaluated"}}
	if diff := testutil.Diff(want, g.NotEvaluatedFields); diff != "" || g.TopologyKey != "rack" {
		t.Errorf("after SetTopologyKey: key %q, NotEvaluatedField (-want +got):\n%s", g.TopologyKey, diff)
	}
}

// A Volcano gang's Succeeded members (kept aside by the snapshot) count
// toward its minimum in validity and in placement, as in Volcano; other
// sources do not look at them.
func TestSucceededMembersCountForVolcano(t *testing.T) {
	node := testutil.MakeNode().Name("n1").Capacity(testutil.Res{"cpu": "4"}).Obj()
	done := member("mpi-0", 0).VolcanoGroup("mpi").PodGroup("trio").Obj()
	done.Status.Phase = corev1.PodSucceeded
	snap := snapshotOf([]*corev1.Pod{
		member("mpi-1", 1).VolcanoGroup("mpi").Req(testutil.Res{"cpu": "2"}).Obj(),
		member("mpi-2", 2).VolcanoGroup("mpi").Req(testutil.Res{"cpu": "2"}).Obj(),
	}, testutil.MakeVolcanoPodGroup("ml", "mpi", 3).Obj(), testutil.MakeNativePodGroup("ml", "trio", 2).Obj())
	snap.Nodes = []*corev1.Node{node}
	snap.SucceededPods = []*corev1.Pod{done}

	g, err := gang.ResolvePodGroup(snap, gang.Ref{Namespace: "ml", Name: "mpi"})
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Succeeded) != 1 || len(g.Members) != 2 {
		t.Fatalf("members %d, succeeded %d; want 2 and 1", len(g.Members), len(g.Succeeded))
	}
	if v := gang.Validate(g); !v.Valid || v.ValidCount != 3 {
		t.Errorf("validity %+v, want valid with 3", v)
	}
	p, err := gang.Place(t.Context(), snap, g, gang.PlaceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Verdict != gang.VerdictPlaced || p.MaxPlaceable != 3 || !strings.Contains(p.Message, "1 succeeded") {
		t.Errorf("placement %s, max %d: %s; want Placed with 3 (1 succeeded)", p.Verdict, p.MaxPlaceable, p.Message)
	}

	native, err := gang.ResolvePodGroup(snap, gang.Ref{Namespace: "ml", Name: "trio", Group: schedule.NativeGroup})
	if err == nil && len(native.Succeeded) != 0 {
		t.Errorf("a native gang got succeeded members %d", len(native.Succeeded))
	}
}

// A selector over pods of a PodGroup is refused, naming the group: an ad
// hoc gang of them would drop the group's minimum and topology.
func TestResolveSelectorRefusesGroupMembers(t *testing.T) {
	snap := snapshotOf([]*corev1.Pod{
		member("w-0", 0).Label("app", "mpi").PodGroup("trio").Obj(),
		member("w-1", 0).Label("app", "mpi").VolcanoGroup("sim").Obj(),
		member("free", 0).Label("app", "mpi").Obj(),
	})
	_, err := gang.ResolveSelector(snap, "ml", labels.SelectorFromSet(labels.Set{"app": "mpi"}), 0)
	want := `the pods matching "app=mpi" belong to podgroups.scheduling.k8s.io/trio, podgroups.scheduling.volcano.sh/sim: name the group instead, so that its minimum and topology apply`
	if err == nil || err.Error() != want {
		t.Errorf("error %v, want %q", err, want)
	}
}

// The source table: each PodGroup source's membership key round-trips, a
// pod naming groups of several sources is the first's member in one
// precedence order, and a lone pod is a source of its own.
func TestSourceTable(t *testing.T) {
	pod := member("p", 0).Obj()
	for _, src := range []gang.Source{coscheduling.Source, volcano.Source, gang.SourceNative} {
		if !src.HasPodGroup() || src.MinimumField() == "" {
			t.Errorf("%s: no PodGroup or minimum field in the table", src)
		}
		gang.SetGroupName(pod, src, "g-"+string(src))
		if got := gang.GroupNameOf(pod, src); got != "g-"+string(src) {
			t.Errorf("%s: GroupNameOf = %q after SetGroupName", src, got)
		}
	}
	var got []string
	for _, ref := range gang.GroupsOf(pod) {
		got = append(got, ref.Group+"/"+ref.Name)
	}
	want := []string{"scheduling.k8s.io/g-scheduling.k8s.io", "scheduling.volcano.sh/g-scheduling.volcano.sh", "scheduling.x-k8s.io/g-scheduling.x-k8s.io"}
	if diff := testutil.Diff(want, got); diff != "" {
		t.Errorf("GroupsOf (-want +got):\n%s", diff)
	}
	if diff := testutil.Diff([]string{"scheduling.k8s.io", "scheduling.volcano.sh", "scheduling.x-k8s.io"}, gang.PodGroupGroups()); diff != "" {
		t.Errorf("PodGroupGroups (-want +got):\n%s", diff)
	}
	lone := gang.LonePod(pod)
	if !lone.IsLonePod() || lone.Source.HasPodGroup() || lone.MinMember != 1 {
		t.Errorf("LonePod: %+v", lone)
	}
	for _, src := range []gang.Source{gang.SourceSelector, gang.SourceFile, kueue.Source} {
		if gang.SourceGate(&schedule.Snapshot{}, &gang.Gang{Source: src}, nil) != nil {
			t.Errorf("%s has a gate", src)
		}
	}
}
