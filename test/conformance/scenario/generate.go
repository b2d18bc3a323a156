package scenario

import (
	"fmt"
	"math/rand/v2"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Sizes of a generated cluster. Fewer than 100 nodes keeps kube-scheduler's
// adaptive percentageOfNodesToScore out of play: it then looks at every node.
const (
	MinNodes = 5
	MaxNodes = 50
)

// Vocabularies, small on purpose so that selectors, spread constraints and
// affinity terms actually meet the pods and nodes they name.
var (
	zones        = []string{"zone-a", "zone-b", "zone-c"}
	apps         = []string{"web", "db", "cache", "batch", "ml"}
	teams        = []string{"red", "blue"}
	versions     = []string{"v1", "v2"}
	envs         = []string{"prod", "test"}
	taintKeys    = []string{"dedicated", "spot", "maintenance", "example.com/gpu"}
	taintValues  = map[string][]string{"dedicated": {"ml", "web"}, "spot": {"true"}, "maintenance": {""}, "example.com/gpu": {"present"}}
	taintEffects = []corev1.TaintEffect{corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute}
	diskTypes    = []string{"ssd", "hdd"}
	cpuSizes     = []int64{2000, 4000, 8000, 16000, 32000, 3500} // millicores
	memorySizes  = []int64{4, 8, 16, 32, 64, 128}                // GiB
	gpuCounts    = []int64{1, 2, 4, 8}
	storageSizes = []int64{20, 50, 100, 200} // GiB
	// images are (name the node reports, name the pod asks for, size); the
	// untagged pod image is normalized to ":latest" by ImageLocality.
	images = []struct {
		node, pod string
		size      int64
	}{
		{"registry.k8s.io/pause:3.10", "registry.k8s.io/pause:3.10", 320_000},
		{"docker.io/library/nginx:1.27", "docker.io/library/nginx:1.27", 70_000_000},
		{"nvcr.io/nvidia/pytorch:24.01-py3", "nvcr.io/nvidia/pytorch:24.01-py3", 900_000_000},
		{"docker.io/library/busybox:latest", "docker.io/library/busybox", 4_300_000},
		{"quay.io/example/model-server:2.1", "quay.io/example/model-server:2.1", 450_000_000},
	}
	hostPorts = []corev1.ContainerPort{
		{Name: "http", ContainerPort: 8080, HostPort: 8080, Protocol: corev1.ProtocolTCP},
		{Name: "metrics", ContainerPort: 9090, HostPort: 9090, Protocol: corev1.ProtocolTCP},
		{Name: "dns", ContainerPort: 53, HostPort: 5353, Protocol: corev1.ProtocolUDP},
		{Name: "local", ContainerPort: 8443, HostPort: 8443, Protocol: corev1.ProtocolTCP, HostIP: "127.0.0.1"},
		{Name: "any", ContainerPort: 8443, HostPort: 8443, Protocol: corev1.ProtocolTCP, HostIP: "0.0.0.0"},
	}
)

const (
	gi = 1 << 30
	mi = 1 << 20
)

// ResourceHugePages2Mi is the huge page size some nodes offer.
const ResourceHugePages2Mi = corev1.ResourceName(corev1.ResourceHugePagesPrefix + "2Mi")

// gen holds one scenario's random streams and the per-scenario knobs that
// make scenarios differ in character (dense or empty, tainted or not). Each
// knob is drawn first from the stream of the feature it shapes.
type gen struct {
	*streams
	sc *Scenario

	zones                                         []string
	density                                       int // at most this many running pods per node
	taintProb, cordonProb, gpuProb, smallPodsProb float64
	zonelessProb, imageProb, runningAffinityProb  float64
	overcommitProb, finishedProb                  float64

	rooms                         []room         // per node, while running pods are placed
	taints                        []corev1.Taint // every taint in the cluster
	nodeNames                     []string
	anyCordonedNode               bool
	mainNamespace, otherNamespace string
	pendingApp                    string
}

// room is what is left on a node while running pods are placed.
type room struct {
	cpu, memory, gpu, storage, pods int64
	ports                           map[string]bool // "proto/port"
}

// Generate returns the scenario for seed. The same seed always gives the same
// scenario: every feature draws from a stream of its own (see streams),
// seeded from seed and the feature's name.
func Generate(seed uint64) *Scenario { return generate(newStreams("scenario", seed)) }

func generate(s *streams) *Scenario {
	g := &gen{streams: s}
	name := Name(s.seed)
	g.sc = &Scenario{Name: name, Seed: s.seed}

	g.zones = zones[:2+g.stream("zones").IntN(2)]
	g.zonelessProb = pick(g.stream("zones"), []float64{0, 0, 0, 0.15})
	g.density = g.stream("density").IntN(5)
	g.taintProb = pick(g.stream("taints"), []float64{0, 0.15, 0.4})
	g.cordonProb = pick(g.stream("cordons"), []float64{0, 0.05, 0.2})
	g.gpuProb = pick(g.stream("gpus"), []float64{0, 0.25, 0.6})
	g.smallPodsProb = pick(g.stream("node pod capacity"), []float64{0, 0, 0.3})
	g.imageProb = pick(g.stream("images"), []float64{0, 0.4})
	g.runningAffinityProb = pick(g.stream("running affinity"), []float64{0, 0.15, 0.35})
	g.overcommitProb = pick(g.stream("running requests"), []float64{0, 0, 0.05})
	g.finishedProb = pick(g.stream("finished"), []float64{0, 0, 0.1})

	g.mainNamespace, g.otherNamespace = name, name+"-other"
	r := g.stream("namespaces")
	g.sc.Namespaces = []*corev1.Namespace{
		NewNamespace(g.mainNamespace, name, map[string]string{LabelEnv: pick(r, envs), LabelTeam: teams[0]}),
		NewNamespace(g.otherNamespace, name, map[string]string{LabelEnv: pick(r, envs), LabelTeam: teams[1]}),
	}

	n := MinNodes + g.stream("nodes").IntN(MaxNodes-MinNodes+1)
	for i := range n {
		g.sc.Nodes = append(g.sc.Nodes, g.node(i))
	}
	for i := range g.sc.Nodes {
		for range g.stream("density").IntN(g.density + 1) {
			if chance(g.stream("finished"), g.finishedProb) {
				g.sc.Finished = append(g.sc.Finished, g.finishedPod(i))
			} else if p := g.runningPod(i); p != nil {
				g.sc.Running = append(g.sc.Running, p)
			}
		}
	}
	g.sc.Pending = g.pendingPod()
	// A headless Service selecting the pending pod's app, as training jobs
	// have for rendezvous, gives a pod without constraints of its own
	// kube-scheduler's system default spreading.
	if r := g.stream("service"); chance(r, 0.35) {
		selector := map[string]string{LabelApp: g.pendingApp}
		if chance(r, 0.3) {
			selector[LabelTeam] = pick(r, teams)
		}
		g.sc.Services = append(g.sc.Services, &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Namespace: g.mainNamespace, Name: name + "-svc"},
			Spec:       corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Selector: selector},
		})
	}
	return g.sc
}

func milliCPU(m int64) resource.Quantity  { return *resource.NewMilliQuantity(m, resource.DecimalSI) }
func bytesOf(b int64) resource.Quantity   { return *resource.NewQuantity(b, resource.BinarySI) }
func countOf(n int64) resource.Quantity   { return *resource.NewQuantity(n, resource.DecimalSI) }
func gibibytes(g int64) resource.Quantity { return bytesOf(g * gi) }

func (g *gen) node(i int) *corev1.Node {
	name := fmt.Sprintf("%s-n%02d", g.sc.Name, i)
	g.nodeNames = append(g.nodeNames, name)
	labels := map[string]string{
		corev1.LabelHostname: name,
		ScenarioLabel:        g.sc.Name,
		LabelGeneration:      strconv.Itoa(1 + g.stream("node generation").IntN(5)),
	}
	if r := g.stream("zones"); !chance(r, g.zonelessProb) {
		labels[corev1.LabelTopologyZone] = pick(r, g.zones)
	}
	if r := g.stream("node disk type"); chance(r, 0.9) {
		labels[LabelDiskType] = pick(r, diskTypes)
	}
	r := g.stream("node size")
	cpu, memory := pick(r, cpuSizes), pick(r, memorySizes)
	switch {
	case cpu <= 4000:
		labels[LabelInstanceType] = "small"
	case cpu <= 16000:
		labels[LabelInstanceType] = "medium"
	default:
		labels[LabelInstanceType] = "large"
	}
	pods := int64(110)
	if r := g.stream("node pod capacity"); chance(r, g.smallPodsProb) {
		pods = 1 + r.Int64N(6)
	}
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    milliCPU(cpu),
		corev1.ResourceMemory: gibibytes(memory),
		corev1.ResourcePods:   countOf(pods),
	}
	rm := room{cpu: cpu, memory: memory * gi, pods: pods, ports: map[string]bool{}}
	if r := g.stream("gpus"); chance(r, g.gpuProb) {
		rm.gpu = pick(r, gpuCounts)
		capacity[ResourceGPU] = countOf(rm.gpu)
		labels[LabelAccelerator] = "nvidia"
	}
	if r := g.stream("node ephemeral storage"); chance(r, 0.8) {
		rm.storage = pick(r, storageSizes) * gi
		capacity[corev1.ResourceEphemeralStorage] = bytesOf(rm.storage)
	}
	if chance(g.stream("node huge pages"), 0.1) {
		capacity[ResourceHugePages2Mi] = gibibytes(1)
	}
	allocatable := capacity.DeepCopy()
	if chance(g.stream("node system reserved"), 0.3) {
		// What the kubelet reserves for the system: scheduling only ever
		// looks at allocatable.
		rm.cpu -= 100
		rm.memory -= 512 * mi
		allocatable[corev1.ResourceCPU] = milliCPU(rm.cpu)
		allocatable[corev1.ResourceMemory] = bytesOf(rm.memory)
	}
	g.rooms = append(g.rooms, rm)

	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Status: corev1.NodeStatus{
			Capacity:    capacity,
			Allocatable: allocatable,
			Conditions:  []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", Message: "conformance node"}},
		},
	}
	if r := g.stream("taints"); chance(r, g.taintProb) {
		for range 1 + r.IntN(2) {
			key := pick(r, taintKeys)
			t := corev1.Taint{Key: key, Value: pick(r, taintValues[key]), Effect: pick(r, taintEffects)}
			if hasTaint(node.Spec.Taints, t) {
				continue
			}
			node.Spec.Taints = append(node.Spec.Taints, t)
			g.taints = append(g.taints, t)
		}
	}
	if chance(g.stream("cordons"), g.cordonProb) {
		node.Spec.Unschedulable = true
		g.anyCordonedNode = true
	}
	if r := g.stream("images"); chance(r, g.imageProb) {
		for _, img := range images {
			if chance(r, 0.4) {
				node.Status.Images = append(node.Status.Images, corev1.ContainerImage{Names: []string{img.node}, SizeBytes: img.size})
			}
		}
	}
	return node
}

// hasTaint reports whether taints has one with t's key and effect (the API
// server refuses two of those).
func hasTaint(taints []corev1.Taint, t corev1.Taint) bool {
	for _, o := range taints {
		if o.Key == t.Key && o.Effect == t.Effect {
			return true
		}
	}
	return false
}

// share returns a request of about a fraction of total, at most left (when
// fitting), rounded down to unit.
func share(r *rand.Rand, total, left, unit int64, overcommit bool) int64 {
	f := pick(r, []float64{0.05, 0.1, 0.25, 0.5})
	v := int64(float64(total)*f) / unit * unit
	if !overcommit && v > left {
		v = left / unit * unit
	}
	return max(v, 0)
}

func (g *gen) runningPod(nodeIndex int) *corev1.Pod {
	rm := &g.rooms[nodeIndex]
	node := g.sc.Nodes[nodeIndex]
	if rm.pods <= 0 {
		return nil
	}
	rm.pods--
	name := fmt.Sprintf("%s-r%03d", g.sc.Name, len(g.sc.Running))
	ns := g.mainNamespace
	if chance(g.stream("running namespace"), 0.2) {
		ns = g.otherNamespace
	}
	r := g.stream("running labels")
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{
			LabelApp: pick(r, apps), LabelTeam: pick(r, teams), LabelVersion: pick(r, versions),
		}},
		Spec: corev1.PodSpec{
			NodeName:          node.Name,
			PriorityClassName: pick(r, []string{HighPriority, MidPriority}),
			Containers:        []corev1.Container{{Name: "main", Image: pick(r, images).pod}},
		},
	}
	// Running pods need not tolerate their node's taints: they are bound
	// directly, as DaemonSet pods or pods that predate a taint are.
	main := &pod.Spec.Containers[0]
	if r := g.stream("running requests"); chance(r, 0.85) { // else BestEffort: scoring then counts kube-scheduler's non-zero defaults
		over := chance(r, g.overcommitProb)
		alloc := node.Status.Allocatable
		req := corev1.ResourceList{}
		if cpu := share(r, alloc.Cpu().MilliValue(), rm.cpu, 50, over); cpu > 0 && chance(r, 0.9) {
			req[corev1.ResourceCPU] = milliCPU(cpu)
			rm.cpu -= cpu
		}
		if memory := share(r, alloc.Memory().Value(), rm.memory, 64*mi, over); memory > 0 && chance(r, 0.9) {
			req[corev1.ResourceMemory] = bytesOf(memory)
			rm.memory -= memory
		}
		if rm.gpu > 0 && chance(r, 0.5) {
			n := 1 + r.Int64N(rm.gpu)
			req[ResourceGPU] = countOf(n)
			main.Resources.Limits = corev1.ResourceList{ResourceGPU: countOf(n)}
			rm.gpu -= n
		}
		if rm.storage > 0 && chance(r, 0.3) {
			s := share(r, node.Status.Allocatable.StorageEphemeral().Value(), rm.storage, gi, over)
			if s > 0 {
				req[corev1.ResourceEphemeralStorage] = bytesOf(s)
				rm.storage -= s
			}
		}
		if len(req) > 0 {
			main.Resources.Requests = req
		}
		// An init container that asks for more than the app containers only
		// raises the pod's effective request; a sidecar adds to it. Neither
		// is charged to the room: they only make the accounting differ.
		if c, ok := req[corev1.ResourceCPU]; ok && chance(r, 0.1) {
			init := corev1.Container{Name: "init", Image: images[0].pod, Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: milliCPU(c.MilliValue() + 100)},
			}}
			if chance(r, 0.4) {
				always := corev1.ContainerRestartPolicyAlways
				init.Name, init.RestartPolicy = "sidecar", &always
				init.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: milliCPU(100), corev1.ResourceMemory: bytesOf(64 * mi)}
			}
			pod.Spec.InitContainers = []corev1.Container{init}
		}
	}
	if r := g.stream("running host ports"); chance(r, 0.12) {
		p := pick(r, hostPorts)
		if key := portKey(p); !rm.ports[key] {
			rm.ports[key] = true
			main.Ports = []corev1.ContainerPort{p}
		}
	}
	if r := g.stream("running affinity"); chance(r, g.runningAffinityProb) {
		pod.Spec.Affinity = g.runningAffinity(r)
	}
	g.podLevel(g.stream("running pod-level resources"), pod)
	if chance(g.stream("running runtime class"), 0.05) {
		pod.Spec.RuntimeClassName = ptr(OverheadRuntimeClass)
	}
	return pod
}

// finishedPod is a pod that ran on the node and ended: big requests, a host
// port, anti-affinity against everything, none of which may count.
func (g *gen) finishedPod(nodeIndex int) *corev1.Pod {
	node := g.sc.Nodes[nodeIndex]
	r := g.stream("finished pods")
	phase := pick(r, []corev1.PodPhase{corev1.PodSucceeded, corev1.PodFailed})
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: g.mainNamespace, Name: fmt.Sprintf("%s-f%03d", g.sc.Name, len(g.sc.Finished)),
			Labels: map[string]string{LabelApp: pick(r, apps), LabelTeam: pick(r, teams)}},
		Spec: corev1.PodSpec{
			NodeName:          node.Name,
			PriorityClassName: HighPriority,
			Containers: []corev1.Container{{Name: "main", Image: images[0].pod, Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: *node.Status.Allocatable.Cpu(), corev1.ResourceMemory: *node.Status.Allocatable.Memory()},
			}}},
			Affinity: &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
				LabelSelector: &metav1.LabelSelector{}, TopologyKey: corev1.LabelHostname,
			}}}},
		},
		Status: corev1.PodStatus{Phase: phase},
	}
	// Its host port is one no other pod on the node uses: kube-scheduler
	// keeps a node's used ports as a set, so removing a finished pod frees a
	// port another pod still holds, until the scheduler restarts. That state
	// depends on the order of events and no snapshot can show it; real nodes
	// never run two pods on one host port.
	if p := pick(r, hostPorts); chance(r, 0.5) && !g.rooms[nodeIndex].ports[portKey(p)] {
		g.rooms[nodeIndex].ports[portKey(p)] = true
		pod.Spec.Containers[0].Ports = []corev1.ContainerPort{p}
	}
	return pod
}

// podLevel sometimes moves a pod's cpu and memory requests from its
// containers to the pod (spec.resources, PodLevelResources is on by default
// in v1.37), sometimes a little above their sum.
func (g *gen) podLevel(r *rand.Rand, pod *corev1.Pod) {
	if !chance(r, 0.06) || len(pod.Spec.InitContainers) > 0 {
		return
	}
	if _, ok := pod.Spec.Containers[0].Resources.Requests[ResourceHugePages2Mi]; ok {
		return // huge pages want a container-level memory request next to them
	}
	total := corev1.ResourceList{}
	for i := range pod.Spec.Containers {
		req := pod.Spec.Containers[i].Resources.Requests
		for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			if q, ok := req[name]; ok {
				sum := total[name]
				sum.Add(q)
				total[name] = sum
				delete(req, name)
			}
		}
	}
	if len(total) == 0 {
		return
	}
	if cpu, ok := total[corev1.ResourceCPU]; ok && chance(r, 0.3) {
		total[corev1.ResourceCPU] = milliCPU(cpu.MilliValue() + 100)
	}
	pod.Spec.Resources = &corev1.ResourceRequirements{Requests: total}
}

func ptr[T any](v T) *T { return &v }

func portKey(p corev1.ContainerPort) string {
	return string(p.Protocol) + "/" + strconv.Itoa(int(p.HostPort))
}

// runningAffinity gives a running pod the terms that reach an incoming pod:
// required anti-affinity (filtering), required affinity (scored with
// hardPodAffinityWeight) and preferred terms (scored by weight).
func (g *gen) runningAffinity(r *rand.Rand) *corev1.Affinity {
	a := &corev1.Affinity{}
	switch x := r.Float64(); {
	case x < 0.4:
		a.PodAntiAffinity = &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{g.podAffinityTerm(r, pick(r, apps))}}
	case x < 0.55:
		a.PodAffinity = &corev1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{g.podAffinityTerm(r, pick(r, apps))}}
	default:
		if chance(r, 0.5) {
			a.PodAffinity = &corev1.PodAffinity{PreferredDuringSchedulingIgnoredDuringExecution: g.weightedTerms(r)}
		} else {
			a.PodAntiAffinity = &corev1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: g.weightedTerms(r)}
		}
	}
	return a
}

func (g *gen) weightedTerms(r *rand.Rand) []corev1.WeightedPodAffinityTerm {
	var out []corev1.WeightedPodAffinityTerm
	for range 1 + r.IntN(2) {
		out = append(out, corev1.WeightedPodAffinityTerm{Weight: 1 + r.Int32N(100), PodAffinityTerm: g.podAffinityTerm(r, pick(r, apps))})
	}
	return out
}

// podAffinityTerm selects pods of app (sometimes of several apps) in the
// pod's own namespace, a listed one, or the namespaces a selector picks.
func (g *gen) podAffinityTerm(r *rand.Rand, app string) corev1.PodAffinityTerm {
	values := []string{app}
	if chance(r, 0.25) {
		values = append(values, pick(r, apps))
		if values[1] == app {
			values = values[:1]
		}
	}
	t := corev1.PodAffinityTerm{
		LabelSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: LabelApp, Operator: metav1.LabelSelectorOpIn, Values: values}}},
		TopologyKey:   pick(r, []string{corev1.LabelHostname, corev1.LabelTopologyZone}),
	}
	switch x := r.Float64(); {
	case x < 0.1:
		t.Namespaces = []string{g.otherNamespace}
	case x < 0.2:
		t.Namespaces = []string{g.mainNamespace, g.otherNamespace}
	case x < 0.3:
		t.NamespaceSelector = &metav1.LabelSelector{} // every namespace
	case x < 0.4:
		t.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{LabelTeam: pick(r, teams)}}
	}
	if chance(r, 0.1) {
		t.LabelSelector.MatchExpressions = append(t.LabelSelector.MatchExpressions,
			metav1.LabelSelectorRequirement{Key: LabelVersion, Operator: metav1.LabelSelectorOpNotIn, Values: []string{pick(r, versions)}})
	}
	return t
}

func (g *gen) pendingPod() *corev1.Pod {
	r := g.stream("pending labels")
	g.pendingApp = pick(r, apps)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: g.mainNamespace, Name: g.sc.Name + "-pending", Labels: map[string]string{
			LabelApp: g.pendingApp, LabelTeam: pick(r, teams), LabelVersion: pick(r, versions),
		}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: pick(r, images).pod}}},
	}
	g.pendingRequests(g.stream("pending requests"), pod)
	g.podLevel(g.stream("pending pod-level resources"), pod)
	if chance(g.stream("pending runtime class"), 0.08) {
		pod.Spec.RuntimeClassName = ptr(OverheadRuntimeClass)
	}
	if r := g.stream("pending node selector"); chance(r, 0.15) {
		pod.Spec.NodeSelector = map[string]string{}
		switch r.IntN(4) {
		case 0:
			pod.Spec.NodeSelector[LabelDiskType] = "ssd"
		case 1:
			pod.Spec.NodeSelector[corev1.LabelTopologyZone] = pick(r, g.zones)
		case 2:
			pod.Spec.NodeSelector[LabelAccelerator] = "nvidia"
		default:
			pod.Spec.NodeSelector[LabelGeneration] = strconv.Itoa(1 + r.IntN(5))
		}
	}
	aff := &corev1.Affinity{}
	if r := g.stream("pending node affinity"); chance(r, 0.2) {
		aff.NodeAffinity = &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: g.nodeSelector(r)}
	}
	if r := g.stream("pending preferred node affinity"); chance(r, 0.3) {
		if aff.NodeAffinity == nil {
			aff.NodeAffinity = &corev1.NodeAffinity{}
		}
		for range 1 + r.IntN(3) {
			aff.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution = append(aff.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution,
				corev1.PreferredSchedulingTerm{Weight: 1 + r.Int32N(100), Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{g.nodeRequirement(r)}}})
		}
	}
	if r := g.stream("pending pod affinity"); chance(r, 0.12) {
		aff.PodAffinity = &corev1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: g.pendingTerms(r)}
	}
	if r := g.stream("pending pod anti-affinity"); chance(r, 0.15) {
		aff.PodAntiAffinity = &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: g.pendingTerms(r)}
	}
	if r := g.stream("pending preferred pod affinity"); chance(r, 0.2) {
		if aff.PodAffinity == nil {
			aff.PodAffinity = &corev1.PodAffinity{}
		}
		aff.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution = g.weightedTerms(r)
	}
	if r := g.stream("pending preferred pod anti-affinity"); chance(r, 0.2) {
		if aff.PodAntiAffinity == nil {
			aff.PodAntiAffinity = &corev1.PodAntiAffinity{}
		}
		aff.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution = g.weightedTerms(r)
	}
	if aff.NodeAffinity != nil || aff.PodAffinity != nil || aff.PodAntiAffinity != nil {
		pod.Spec.Affinity = aff
	}
	pod.Spec.Tolerations = g.tolerations(g.stream("pending tolerations"))
	if r := g.stream("pending host ports"); chance(r, 0.12) {
		first := pick(r, hostPorts)
		pod.Spec.Containers[0].Ports = []corev1.ContainerPort{first}
		if second := pick(r, hostPorts); chance(r, 0.3) && portKey(second) != portKey(first) {
			pod.Spec.Containers[0].Ports = append(pod.Spec.Containers[0].Ports, second)
		}
	}
	if r := g.stream("pending spread"); chance(r, 0.3) {
		pod.Spec.TopologySpreadConstraints = g.spreadConstraints(r)
	}
	switch x := g.stream("pending priority").Float64(); {
	case x < 0.15:
		pod.Spec.PriorityClassName = NeverPreemptPriority
	case x < 0.6:
		pod.Spec.PriorityClassName = MidPriority
	}
	return pod
}

// pendingRequests sizes the pending pod: nothing at all, something that fits
// nowhere, or a mix of cpu, memory, GPUs and ephemeral storage, sometimes over
// several containers and an init container.
func (g *gen) pendingRequests(r *rand.Rand, pod *corev1.Pod) {
	req := corev1.ResourceList{}
	switch x := r.Float64(); {
	case x < 0.12:
		return
	case x < 0.2:
		switch r.IntN(3) {
		case 0:
			req[corev1.ResourceCPU] = milliCPU(64000)
		case 1:
			req[corev1.ResourceMemory] = gibibytes(512)
		default:
			req[ResourceGPU] = countOf(16)
		}
	default:
		if chance(r, 0.85) {
			req[corev1.ResourceCPU] = milliCPU(pick(r, []int64{100, 250, 500, 1000, 2000, 4000, 8000}))
		}
		if chance(r, 0.85) {
			req[corev1.ResourceMemory] = bytesOf(pick(r, []int64{128 * mi, 512 * mi, gi, 4 * gi, 16 * gi, 48 * gi}))
		}
		if chance(r, 0.15) {
			req[ResourceGPU] = countOf(pick(r, gpuCounts))
		}
		if chance(r, 0.15) {
			req[corev1.ResourceEphemeralStorage] = gibibytes(pick(r, []int64{1, 10, 60, 150}))
		}
	}
	if _, ok := req[corev1.ResourceMemory]; ok && chance(r, 0.06) {
		// Huge pages need a memory (or cpu) request and a limit equal to
		// their request.
		req[ResourceHugePages2Mi] = bytesOf(pick(r, []int64{256 * mi, 512 * mi, 2 * gi}))
	}
	main := &pod.Spec.Containers[0]
	main.Resources.Requests = req
	for _, name := range []corev1.ResourceName{ResourceGPU, ResourceHugePages2Mi} {
		if q, ok := req[name]; ok {
			if main.Resources.Limits == nil {
				main.Resources.Limits = corev1.ResourceList{}
			}
			main.Resources.Limits[name] = q
		}
	}
	if c, ok := req[corev1.ResourceCPU]; ok && chance(r, 0.2) {
		// A second container with half the cpu: the pod's request is the sum.
		half := c.MilliValue() / 2
		main.Resources.Requests[corev1.ResourceCPU] = milliCPU(c.MilliValue() - half)
		pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{Name: "helper", Image: images[0].pod,
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: milliCPU(half)}}})
	}
	if m, ok := req[corev1.ResourceMemory]; ok && chance(r, 0.1) {
		// An init container asking for more memory than the app: the pod's
		// request is the larger of the two.
		pod.Spec.InitContainers = []corev1.Container{{Name: "init", Image: images[0].pod,
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceMemory: bytesOf(m.Value() * 2)}}}}
	}
	if chance(r, 0.06) {
		// A sidecar (restartable init container): its requests add up with
		// the app's, and an init container after it comes on top of both.
		always := corev1.ContainerRestartPolicyAlways
		sidecar := corev1.Container{Name: "sidecar", Image: images[0].pod, RestartPolicy: &always,
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: milliCPU(500), corev1.ResourceMemory: bytesOf(256 * mi)}}}
		pod.Spec.InitContainers = append([]corev1.Container{sidecar}, pod.Spec.InitContainers...)
	}
}

func (g *gen) nodeRequirement(r *rand.Rand) corev1.NodeSelectorRequirement {
	switch r.IntN(7) {
	case 0:
		return corev1.NodeSelectorRequirement{Key: corev1.LabelTopologyZone, Operator: corev1.NodeSelectorOpIn, Values: subset(r, g.zones)}
	case 1:
		return corev1.NodeSelectorRequirement{Key: LabelDiskType, Operator: corev1.NodeSelectorOpNotIn, Values: []string{"hdd"}}
	case 2:
		return corev1.NodeSelectorRequirement{Key: LabelGeneration, Operator: corev1.NodeSelectorOpGt, Values: []string{pick(r, []string{"1", "2", "3"})}}
	case 3:
		return corev1.NodeSelectorRequirement{Key: LabelGeneration, Operator: corev1.NodeSelectorOpLt, Values: []string{pick(r, []string{"3", "4", "5"})}}
	case 4:
		return corev1.NodeSelectorRequirement{Key: LabelAccelerator, Operator: corev1.NodeSelectorOpExists}
	case 5:
		return corev1.NodeSelectorRequirement{Key: LabelAccelerator, Operator: corev1.NodeSelectorOpDoesNotExist}
	default:
		return corev1.NodeSelectorRequirement{Key: LabelInstanceType, Operator: corev1.NodeSelectorOpIn, Values: subset(r, []string{"small", "medium", "large"})}
	}
}

// nodeSelector returns one or two terms (ORed), each of one or two
// requirements (ANDed), sometimes with a field requirement on the node name.
func (g *gen) nodeSelector(r *rand.Rand) *corev1.NodeSelector {
	sel := &corev1.NodeSelector{}
	for range 1 + r.IntN(2) {
		var term corev1.NodeSelectorTerm
		if chance(r, 0.1) {
			op := pick(r, []corev1.NodeSelectorOperator{corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn})
			term.MatchFields = []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: op, Values: []string{pick(r, g.nodeNames)}}}
		}
		if len(term.MatchFields) == 0 || chance(r, 0.5) {
			for range 1 + r.IntN(2) {
				term.MatchExpressions = append(term.MatchExpressions, g.nodeRequirement(r))
			}
		}
		sel.NodeSelectorTerms = append(sel.NodeSelectorTerms, term)
	}
	return sel
}

// pendingTerms is one required (anti-)affinity term, sometimes two (ANDed).
func (g *gen) pendingTerms(r *rand.Rand) []corev1.PodAffinityTerm {
	terms := []corev1.PodAffinityTerm{g.pendingTerm(r)}
	if chance(r, 0.2) {
		terms = append(terms, g.pendingTerm(r))
	}
	return terms
}

// pendingTerm is a required (anti-)affinity term of the pending pod; a
// quarter of them select the pending pod's own app, the self-affinity case
// kube-scheduler lets the first pod of a group through.
func (g *gen) pendingTerm(r *rand.Rand) corev1.PodAffinityTerm {
	app := pick(r, apps)
	if chance(r, 0.25) {
		app = g.pendingApp
	}
	t := g.podAffinityTerm(r, app)
	if chance(r, 0.1) {
		// The API server merges matchLabelKeys into the selector as
		// "team in (<the pod's team>)".
		t.MatchLabelKeys = []string{LabelTeam}
	}
	return t
}

func (g *gen) tolerations(r *rand.Rand) []corev1.Toleration {
	var out []corev1.Toleration
	if chance(r, 0.04) {
		return []corev1.Toleration{{Operator: corev1.TolerationOpExists}}
	}
	seen := map[string]bool{}
	for _, t := range g.taints {
		if seen[t.Key+"/"+string(t.Effect)] || !chance(r, 0.4) {
			continue
		}
		seen[t.Key+"/"+string(t.Effect)] = true
		tol := corev1.Toleration{Key: t.Key, Operator: corev1.TolerationOpExists}
		if t.Value != "" && chance(r, 0.5) {
			tol.Operator, tol.Value = corev1.TolerationOpEqual, t.Value
		}
		if chance(r, 0.7) {
			tol.Effect = t.Effect
		}
		if tol.Effect == corev1.TaintEffectNoExecute && chance(r, 0.3) {
			secs := int64(60)
			tol.TolerationSeconds = &secs
		}
		out = append(out, tol)
	}
	if g.anyCordonedNode && chance(r, 0.1) {
		out = append(out, corev1.Toleration{Key: corev1.TaintNodeUnschedulable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule})
	}
	return out
}

func (g *gen) spreadConstraints(r *rand.Rand) []corev1.TopologySpreadConstraint {
	type slot struct {
		key  string
		when corev1.UnsatisfiableConstraintAction
	}
	var slots []slot
	for _, key := range []string{corev1.LabelTopologyZone, corev1.LabelHostname} {
		for _, when := range []corev1.UnsatisfiableConstraintAction{corev1.DoNotSchedule, corev1.ScheduleAnyway} {
			slots = append(slots, slot{key, when})
		}
	}
	r.Shuffle(len(slots), func(i, j int) { slots[i], slots[j] = slots[j], slots[i] })
	var out []corev1.TopologySpreadConstraint
	for _, s := range slots[:1+r.IntN(2)] {
		app := g.pendingApp
		if chance(r, 0.25) {
			app = pick(r, apps)
		}
		c := corev1.TopologySpreadConstraint{
			MaxSkew:           1 + r.Int32N(3),
			TopologyKey:       s.key,
			WhenUnsatisfiable: s.when,
			LabelSelector:     &metav1.LabelSelector{MatchLabels: map[string]string{LabelApp: app}},
		}
		if s.when == corev1.DoNotSchedule && chance(r, 0.2) {
			minDomains := 2 + r.Int32N(3)
			c.MinDomains = &minDomains
		}
		if chance(r, 0.15) {
			p := pick(r, []corev1.NodeInclusionPolicy{corev1.NodeInclusionPolicyIgnore, corev1.NodeInclusionPolicyHonor})
			c.NodeAffinityPolicy = &p
		}
		if chance(r, 0.15) {
			p := pick(r, []corev1.NodeInclusionPolicy{corev1.NodeInclusionPolicyIgnore, corev1.NodeInclusionPolicyHonor})
			c.NodeTaintsPolicy = &p
		}
		if chance(r, 0.1) {
			c.MatchLabelKeys = []string{LabelTeam}
		}
		out = append(out, c)
	}
	return out
}
