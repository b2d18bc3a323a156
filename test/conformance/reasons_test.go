package conformance

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/test/conformance/scenario"
)

// caseBuilder writes a hand-made scenario: names get the case's prefix and
// every object lands in the scenario.
type caseBuilder struct{ sc *scenario.Scenario }

func newCase(name string) *caseBuilder {
	sc := &scenario.Scenario{Name: name, Namespaces: []*corev1.Namespace{
		scenario.NewNamespace(name, name, map[string]string{scenario.LabelTeam: "red"}),
		scenario.NewNamespace(name+"-other", name, map[string]string{scenario.LabelTeam: "blue"}),
	}}
	return &caseBuilder{sc: sc}
}

func (b *caseBuilder) nodeName(suffix string) string { return b.sc.Name + "-" + suffix }

// node adds a node with 4 cpus, 8Gi of memory and room for 110 pods, in zone
// (no zone label when empty).
func (b *caseBuilder) node(suffix, zone string) *testutil.NodeWrapper {
	w := testutil.MakeNode().Name(b.nodeName(suffix)).Label(scenario.ScenarioLabel, b.sc.Name).
		Capacity(testutil.Res{"cpu": "4", "memory": "8Gi"})
	if zone != "" {
		w.Label(corev1.LabelTopologyZone, zone)
	}
	b.sc.Nodes = append(b.sc.Nodes, w.Obj())
	return w
}

// running adds a pod of app bound to the node named by suffix.
func (b *caseBuilder) running(node, app string) *testutil.PodWrapper {
	w := testutil.MakePod().Namespace(b.sc.Name).Name(b.sc.Name+"-r"+string(rune('a'+len(b.sc.Running)))).
		Label(scenario.LabelApp, app).Node(b.nodeName(node)).Priority(scenario.HighPriority, scenario.HighPriorityValue)
	b.sc.Running = append(b.sc.Running, w.Obj())
	return w
}

// nominated adds a pending pod of app that an earlier preemption nominated
// to the node named by suffix.
func (b *caseBuilder) nominated(node, app string) *testutil.PodWrapper {
	w := testutil.MakePod().Namespace(b.sc.Name).Name(b.sc.Name+"-n"+string(rune('a'+len(b.sc.Nominated)))).
		Label(scenario.LabelApp, app).SchedulingGate(scenario.NominationGate)
	w.Status.NominatedNodeName = b.nodeName(node)
	b.sc.Nominated = append(b.sc.Nominated, w.Obj())
	return w
}

// pending sets the pending pod, of app.
func (b *caseBuilder) pending(app string) *testutil.PodWrapper {
	w := testutil.MakePod().Namespace(b.sc.Name).Name(b.sc.Name+"-pending").Label(scenario.LabelApp, app)
	b.sc.Pending = w.Obj()
	return w
}

func appTerm(app, topologyKey string) corev1.PodAffinityTerm {
	return corev1.PodAffinityTerm{
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{scenario.LabelApp: app}},
		TopologyKey:   topologyKey,
	}
}

func ptr[T any](v T) *T { return &v }

func port(p int32, proto corev1.Protocol, hostIP string) []corev1.ContainerPort {
	return []corev1.ContainerPort{{ContainerPort: p, HostPort: p, Protocol: proto, HostIP: hostIP}}
}

// reasonCase is a hand-written scenario and what kube-scheduler must make
// of it.
type reasonCase struct {
	name   string
	plugin string
	// want is a reason kube-scheduler's message must contain; empty when the
	// pod must be bound. It checks the case, not our pipeline.
	want  string
	build func(b *caseBuilder)
}

// reasonCases has one scenario per reason string of the default profile's
// filters (and a few placements), each failing for the one plugin it names,
// so a disagreement points at that plugin.
var reasonCases = []reasonCase{
	{
		name: "untolerated-taint", plugin: "TaintToleration", want: "2 node(s) had untolerated taint(s)",
		build: func(b *caseBuilder) {
			b.node("a", "zone-a").Taint("dedicated", "ml", corev1.TaintEffectNoSchedule)
			b.node("b", "zone-a").Taint("spot", "true", corev1.TaintEffectNoExecute).Taint("dedicated", "ml", corev1.TaintEffectNoExecute)
			b.node("c", "zone-b").Unschedulable()
			b.pending("web").Toleration("spot", "", corev1.TaintEffectNoExecute)
		},
	},
	{
		name: "unschedulable-node", plugin: "NodeUnschedulable", want: "3 node(s) were unschedulable",
		build: func(b *caseBuilder) {
			b.node("a", "zone-a").Unschedulable()
			b.node("b", "zone-a").Unschedulable()
			b.node("c", "zone-b").Unschedulable()
			b.pending("web")
		},
	},
	{
		name: "node-affinity", plugin: "NodeAffinity", want: "3 node(s) didn't match Pod's node affinity/selector",
		build: func(b *caseBuilder) {
			b.node("a", "zone-a").Label(scenario.LabelDiskType, "hdd")
			b.node("b", "zone-b").Label(scenario.LabelDiskType, "ssd").Label(scenario.LabelGeneration, "2")
			b.node("c", "zone-b")
			p := b.pending("web")
			p.Spec.NodeSelector = map[string]string{scenario.LabelDiskType: "ssd"}
			p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{
					{Key: scenario.LabelGeneration, Operator: corev1.NodeSelectorOpGt, Values: []string{"3"}},
				}}},
			}}}
		},
	},
	{
		name: "insufficient-cpu", plugin: "NodeResourcesFit", want: "3 Insufficient cpu",
		build: func(b *caseBuilder) {
			b.node("a", "zone-a")
			b.node("b", "zone-a")
			b.node("c", "zone-b")
			b.running("a", "db").Req(testutil.Res{"cpu": "3"})
			b.running("b", "db").Req(testutil.Res{"cpu": "3500m"})
			b.running("c", "db").Req(testutil.Res{"cpu": "2", "memory": "1Gi"})
			b.running("c", "cache").Req(testutil.Res{"cpu": "1"})
			b.pending("web").Req(testutil.Res{"cpu": "1500m", "memory": "1Gi"})
		},
	},
	{
		name: "insufficient-memory", plugin: "NodeResourcesFit", want: "2 Insufficient memory",
		build: func(b *caseBuilder) {
			b.node("a", "zone-a")
			b.node("b", "zone-b").Capacity(testutil.Res{"memory": "2Gi"})
			b.running("a", "db").Req(testutil.Res{"memory": "6Gi"})
			b.pending("web").Req(testutil.Res{"memory": "3Gi"})
		},
	},
	{
		name: "insufficient-gpu", plugin: "NodeResourcesFit", want: "3 Insufficient nvidia.com/gpu",
		build: func(b *caseBuilder) {
			b.node("a", "zone-a").Capacity(testutil.Res{"nvidia.com/gpu": "2"})
			b.node("b", "zone-a").Capacity(testutil.Res{"nvidia.com/gpu": "1"})
			b.node("c", "zone-b")
			b.running("a", "ml").Req(testutil.Res{"nvidia.com/gpu": "1"})
			b.pending("ml").Req(testutil.Res{"cpu": "1", "nvidia.com/gpu": "2"})
		},
	},
	{
		name: "insufficient-ephemeral-storage", plugin: "NodeResourcesFit", want: "2 Insufficient ephemeral-storage",
		build: func(b *caseBuilder) {
			b.node("a", "zone-a").Capacity(testutil.Res{"ephemeral-storage": "20Gi"})
			b.node("b", "zone-b")
			b.pending("web").Req(testutil.Res{"ephemeral-storage": "30Gi"})
		},
	},
	{
		name: "too-many-pods", plugin: "NodeResourcesFit", want: "2 Too many pods",
		build: func(b *caseBuilder) {
			b.node("a", "zone-a").Capacity(testutil.Res{"pods": "1"})
			b.node("b", "zone-b").Capacity(testutil.Res{"pods": "2"})
			b.running("a", "db")
			b.running("b", "db")
			b.running("b", "cache")
			b.pending("web")
		},
	},
	{
		name: "mixed-resources", plugin: "NodeResourcesFit", want: "1 Insufficient cpu, 1 Too many pods, 2 Insufficient memory",
		build: func(b *caseBuilder) {
			b.node("a", "zone-a")
			b.node("b", "zone-a").Capacity(testutil.Res{"pods": "1"})
			b.node("c", "zone-b")
			b.running("a", "db").Req(testutil.Res{"cpu": "4", "memory": "8Gi"})
			b.running("b", "db")
			b.running("c", "db").Req(testutil.Res{"memory": "7Gi"})
			b.pending("web").Req(testutil.Res{"cpu": "1", "memory": "2Gi"})
		},
	},
	{
		name: "pod-overhead", plugin: "NodeResourcesFit", want: "2 Insufficient cpu",
		build: func(b *caseBuilder) {
			b.node("a", "zone-a")
			b.node("b", "zone-b")
			b.running("a", "db").Req(testutil.Res{"cpu": "3800m"})
			b.running("b", "db").Req(testutil.Res{"cpu": "3700m"})
			p := b.pending("web").Req(testutil.Res{"cpu": "100m"})
			p.Spec.RuntimeClassName = ptr(scenario.OverheadRuntimeClass) // +250m
		},
	},
	{
		// Scored: kube-scheduler v1.37.1's NodeResourcesFit scorer ignores
		// pod-level requests (its scorer is built without the feature
		// flag), NodeResourcesBalancedAllocation honours them.
		name: "pod-level-resources", plugin: "NodeResourcesFit",
		build: func(b *caseBuilder) {
			b.node("a", "zone-a").Capacity(testutil.Res{"cpu": "2", "memory": "64Gi"})
			b.node("b", "zone-a").Capacity(testutil.Res{"cpu": "16", "memory": "2Gi"})
			b.node("c", "zone-b").Capacity(testutil.Res{"cpu": "8", "memory": "16Gi"})
			b.pending("web").Obj().Spec.Resources = &corev1.ResourceRequirements{Requests: testutil.Res{"cpu": "1500m", "memory": "3Gi"}.List()}
		},
	},
	{
		name: "host-ports", plugin: "NodePorts", want: "3 node(s) didn't have free ports for the requested pod ports",
		build: func(b *caseBuilder) {
			b.node("a", "zone-a")
			b.node("b", "zone-a")
			b.node("c", "zone-b")
			b.running("a", "db").Obj().Spec.Containers[0].Ports = port(8080, corev1.ProtocolTCP, "")
			b.running("b", "db").Obj().Spec.Containers[0].Ports = port(8080, corev1.ProtocolTCP, "127.0.0.1")
			b.running("c", "db").Obj().Spec.Containers[0].Ports = port(8080, corev1.ProtocolTCP, "10.0.0.1")
			b.running("c", "db").Obj().Spec.Containers[0].Ports = port(9090, corev1.ProtocolUDP, "")
			b.pending("web").Obj().Spec.Containers[0].Ports = port(8080, corev1.ProtocolTCP, "0.0.0.0")
		},
	},
	{
		name: "topology-spread", plugin: "PodTopologySpread", want: "2 node(s) didn't match pod topology spread constraints",
		build: func(b *caseBuilder) {
			b.node("a", "zone-a")
			b.node("b", "zone-a")
			b.node("c", "zone-b").Capacity(testutil.Res{"cpu": "1"})
			b.running("a", "web")
			b.running("b", "web")
			p := b.pending("web").Req(testutil.Res{"cpu": "2"})
			p.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{
				MaxSkew: 1, TopologyKey: corev1.LabelTopologyZone, WhenUnsatisfiable: corev1.DoNotSchedule,
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{scenario.LabelApp: "web"}},
			}}
		},
	},
	{
		name: "topology-spread-missing-label", plugin: "PodTopologySpread", want: "node(s) didn't match pod topology spread constraints (missing required label)",
		build: func(b *caseBuilder) {
			b.node("a", "")
			b.node("b", "")
			b.node("c", "zone-b").Unschedulable()
			p := b.pending("web")
			p.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{
				MaxSkew: 1, TopologyKey: corev1.LabelTopologyZone, WhenUnsatisfiable: corev1.DoNotSchedule,
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{scenario.LabelApp: "web"}},
			}}
		},
	},
	{
		name: "topology-spread-min-domains", plugin: "PodTopologySpread", want: "node(s) didn't match pod topology spread constraints",
		build: func(b *caseBuilder) {
			b.node("a", "zone-a")
			b.node("b", "zone-b")
			b.running("a", "web")
			b.running("b", "web")
			p := b.pending("web")
			three := int32(3)
			p.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{
				MaxSkew: 1, TopologyKey: corev1.LabelTopologyZone, WhenUnsatisfiable: corev1.DoNotSchedule, MinDomains: &three,
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{scenario.LabelApp: "web"}},
			}}
		},
	},
	{
		name: "pod-affinity", plugin: "InterPodAffinity", want: "3 node(s) didn't match pod affinity rules",
		build: func(b *caseBuilder) {
			b.node("a", "zone-a")
			b.node("b", "zone-a")
			b.node("c", "zone-b")
			b.running("a", "cache")
			b.pending("web").Obj().Spec.Affinity = &corev1.Affinity{PodAffinity: &corev1.PodAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{appTerm("db", corev1.LabelTopologyZone)},
			}}
		},
	},
	{
		name: "pod-anti-affinity", plugin: "InterPodAffinity", want: "3 node(s) didn't match pod anti-affinity rules",
		build: func(b *caseBuilder) {
			b.node("a", "zone-a")
			b.node("b", "zone-a")
			b.node("c", "zone-b")
			b.running("a", "db")
			b.running("c", "db")
			b.pending("web").Obj().Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{appTerm("db", corev1.LabelTopologyZone)},
			}}
		},
	},
	{
		name: "existing-pods-anti-affinity", plugin: "InterPodAffinity", want: "2 node(s) didn't satisfy existing pods anti-affinity rules",
		build: func(b *caseBuilder) {
			b.node("a", "zone-a")
			b.node("b", "zone-b")
			b.node("c", "zone-b").Unschedulable()
			b.running("a", "db").Obj().Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{appTerm("web", corev1.LabelHostname)},
			}}
			b.running("b", "db").Obj().Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{appTerm("web", corev1.LabelTopologyZone)},
			}}
			b.pending("web")
		},
	},
	{
		name: "preemption-never", plugin: "DefaultPreemption", want: "preemption: not eligible due to preemptionPolicy=Never.",
		build: func(b *caseBuilder) {
			b.node("a", "zone-a").Taint("dedicated", "ml", corev1.TaintEffectNoSchedule)
			b.node("b", "zone-b")
			b.running("b", "db").Req(testutil.Res{"cpu": "3"})
			b.pending("web").Req(testutil.Res{"cpu": "2"}).Obj().Spec.PriorityClassName = scenario.NeverPreemptPriority
		},
	},
	{
		name: "self-affinity-first-pod", plugin: "InterPodAffinity",
		build: func(b *caseBuilder) {
			b.node("a", "zone-a")
			b.node("b", "zone-b")
			b.running("b", "db")
			b.pending("web").Obj().Spec.Affinity = &corev1.Affinity{PodAffinity: &corev1.PodAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{appTerm("web", corev1.LabelTopologyZone)},
			}}
		},
	},
	{
		// Room held for a nominated pod of higher priority is not free.
		name: "nominated-pod-holds-room", plugin: "NodeResourcesFit", want: "2 Insufficient cpu",
		build: func(b *caseBuilder) {
			b.node("a", "zone-a")
			b.node("b", "zone-b")
			b.running("b", "db").Req(testutil.Res{"cpu": "3"})
			b.nominated("a", "db").Req(testutil.Res{"cpu": "3"}).Priority(scenario.HighPriority, scenario.HighPriorityValue)
			b.pending("web").Req(testutil.Res{"cpu": "2"})
		},
	},
	{
		// A nominated pod of lower priority does not hold its room.
		name: "nominated-pod-lower-priority", plugin: "(score plugins)",
		build: func(b *caseBuilder) {
			b.node("a", "zone-a")
			b.node("b", "zone-b")
			b.running("b", "db").Req(testutil.Res{"cpu": "3"})
			b.nominated("a", "db").Req(testutil.Res{"cpu": "3"})
			b.pending("web").Req(testutil.Res{"cpu": "2"}).Priority(scenario.MidPriority, scenario.MidPriorityValue)
		},
	},
	{
		// A nominated pod counts for anti-affinity in the first pass.
		name: "nominated-pod-anti-affinity", plugin: "InterPodAffinity", want: "node(s) didn't match pod anti-affinity rules",
		build: func(b *caseBuilder) {
			b.node("a", "zone-a")
			b.node("b", "zone-b")
			b.running("b", "web")
			b.nominated("a", "web").Priority(scenario.HighPriority, scenario.HighPriorityValue)
			b.pending("web").Obj().Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{appTerm("web", corev1.LabelHostname)},
			}}
		},
	},
	{
		name: "tolerated-cordon", plugin: "NodeUnschedulable",
		build: func(b *caseBuilder) {
			b.node("a", "zone-a").Unschedulable()
			b.node("b", "zone-b").Unschedulable()
			b.pending("web").Toleration(corev1.TaintNodeUnschedulable, "", corev1.TaintEffectNoSchedule)
		},
	},
	{
		name: "scored-placement", plugin: "(score plugins)",
		build: func(b *caseBuilder) {
			b.node("a", "zone-a").Taint("spot", "true", corev1.TaintEffectPreferNoSchedule)
			b.node("b", "zone-a").Label(scenario.LabelDiskType, "ssd")
			b.node("c", "zone-b").Capacity(testutil.Res{"cpu": "16", "memory": "64Gi"})
			b.node("d", "zone-b")
			b.running("b", "db").Req(testutil.Res{"cpu": "1", "memory": "1Gi"})
			b.running("d", "web").Req(testutil.Res{"cpu": "2", "memory": "4Gi"})
			p := b.pending("web").Req(testutil.Res{"cpu": "500m", "memory": "512Mi"})
			p.Spec.Affinity = &corev1.Affinity{
				NodeAffinity: &corev1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{
					Weight: 40, Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{
						{Key: scenario.LabelDiskType, Operator: corev1.NodeSelectorOpIn, Values: []string{"ssd"}},
					}},
				}}},
				PodAntiAffinity: &corev1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{
					Weight: 70, PodAffinityTerm: appTerm("web", corev1.LabelHostname),
				}}},
			}
			p.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{
				MaxSkew: 1, TopologyKey: corev1.LabelTopologyZone, WhenUnsatisfiable: corev1.ScheduleAnyway,
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{scenario.LabelApp: "web"}},
			}}
		},
	},
}

// TestReasons runs the hand-written scenarios, each compared with
// kube-scheduler as the random ones are.
func TestReasons(t *testing.T) { runCases(t, "TestReasons", reasonCases) }

// runCases runs hand-written scenarios as subtests of the test named test.
func runCases(t *testing.T, test string, cases []reasonCase) {
	h := sharedHarness(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := newCase("t-" + tc.name)
			tc.build(b)
			r, err := h.Run(t.Context(), b.sc)
			if err != nil {
				t.Fatalf("the harness failed (not a disagreement): %v", err)
			}
			t.Logf("kube-scheduler %s; ours %s", r.kube, describe(r))
			switch {
			case tc.want == "" && r.kube.Node == "":
				t.Errorf("case is wrong: kube-scheduler did not bind the pod: %s", r.kube)
			case tc.want != "" && !strings.Contains(r.kube.Message, tc.want):
				t.Errorf("case is wrong: kube-scheduler's decision %s does not contain %q", r.kube, tc.want)
			}
			if len(r.problems) > 0 {
				if len(r.plugins) == 0 {
					r.plugins = []string{tc.plugin}
				}
				report(t, h, r, "replay: go test ./test/conformance/ -run '"+test+"/"+tc.name+"$' -v")
			}
		})
	}
}
