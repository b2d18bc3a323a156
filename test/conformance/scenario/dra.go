package scenario

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// GPUDriver is the driver whose devices DRA scenarios publish: the suite
// runs no kubelet and no driver, so the scenario's ResourceSlices are
// written the way an administrator may write them.
const GPUDriver = "gpu.example.com"

// Sizes of a DRA scenario: a few nodes, so that devices are scarce and the
// held ones matter.
const (
	MinDRANodes = 3
	MaxDRANodes = 8
	MaxGPUs     = 8
)

// Device attributes (in GPUDriver's domain) and capacity.
const (
	AttrModel   = "model"  // string: a100 or h100
	AttrMemory  = "memory" // int: GiB
	CapMemory   = "memory" // quantity
	RequestName = "gpu"    // the request of every held claim
)

// DRAName returns the scenario name GenerateDRA gives a seed; it differs
// from Generate's, since namespaces outlive their scenario.
func DRAName(seed uint64) string { return "d" + strconv.FormatUint(seed, 10) }

// gpuModel is one kind of device.
type gpuModel struct {
	model  string
	memory int64 // GiB
}

var gpuModels = []gpuModel{{"a100", 40}, {"a100", 80}, {"h100", 80}}

// draGen holds one DRA scenario's random streams and what is left to give.
type draGen struct {
	*streams
	sc *Scenario

	mainNamespace, otherNamespace string
	// devices are each node's devices; free tells which no claim holds.
	devices [][]gpuModel
	free    [][]bool
	classes []string // existing class names
	pods    int      // running pods so far, for their names
}

// GenerateDRA returns the Dynamic Resource Allocation scenario for seed: a
// few nodes with 0-8 GPUs each, published in one ResourceSlice per node
// (one pool per node), device classes selecting them by CEL, claims
// already allocated that hold some devices (reserved for a running pod or
// for nobody), running pods that take cpu and memory, and one pending pod
// with one or two claims: new claims, claims from templates, or a claim
// already allocated on one node that it shares. Some scenarios (see
// extendedResources) also back an extended resource by a class. The same
// seed always gives the same scenario: every feature draws from a stream of
// its own (see streams), seeded from seed and the feature's name.
func GenerateDRA(seed uint64) *Scenario { return generateDRA(newStreams("dra", seed)) }

func generateDRA(s *streams) *Scenario {
	g := &draGen{streams: s}
	name := DRAName(s.seed)
	g.sc = &Scenario{Name: name, Seed: s.seed}
	g.mainNamespace, g.otherNamespace = name, name+"-other"
	g.sc.Namespaces = []*corev1.Namespace{
		NewNamespace(g.mainNamespace, name, map[string]string{LabelTeam: teams[0]}),
		NewNamespace(g.otherNamespace, name, map[string]string{LabelTeam: teams[1]}),
	}
	g.classes = g.deviceClasses()

	n := MinDRANodes + g.stream("nodes").IntN(MaxDRANodes-MinDRANodes+1)
	for i := range n {
		g.sc.Nodes = append(g.sc.Nodes, g.node(i))
	}
	for i := range g.sc.Nodes {
		if s := g.slice(i); s != nil {
			g.sc.ResourceSlices = append(g.sc.ResourceSlices, s)
		}
	}
	// Claims that hold devices, each reserved for a running pod on its node
	// or for nobody (a claim whose pod is gone still holds its devices).
	r := g.stream("held claims")
	for i := range g.sc.Nodes {
		for range r.IntN(3) {
			if g.freeCount(i) == 0 || !chance(r, 0.5) {
				continue
			}
			ns := g.mainNamespace
			if chance(r, 0.3) {
				ns = g.otherNamespace
			}
			claim := g.allocatedClaim(ns, fmt.Sprintf("%s-held-%02d", name, len(g.sc.ResourceClaims)), i, 1+r.IntN(g.freeCount(i)))
			if chance(r, 0.5) {
				g.reserveFor(claim, g.runningPod(i, ns, claim.Name))
			}
			g.sc.ResourceClaims = append(g.sc.ResourceClaims, claim)
		}
	}
	for i := range g.sc.Nodes {
		for range g.stream("running pod count").IntN(3) {
			g.runningPod(i, g.mainNamespace, "")
		}
	}
	g.sc.Pending = g.pendingPod()
	if r := g.stream("extended resources"); chance(r, ExtendedResourceProb) {
		g.extendedResources(r)
	}
	return g.sc
}

// deviceClasses creates the scenario's classes: every GPU, each model, and
// the ones with 80 GiB or more. Class names are cluster-wide, hence the
// scenario's prefix.
func (g *draGen) deviceClasses() []string {
	driver := fmt.Sprintf("device.driver == %q", GPUDriver)
	defs := []struct {
		suffix string
		exprs  []string
	}{
		{"gpu", []string{driver}},
		{"a100", []string{driver, modelIs("a100")}},
		{"h100", []string{driver, modelIs("h100")}},
		{"large", []string{driver, fmt.Sprintf("device.attributes[%q].%s >= 80", GPUDriver, AttrMemory)}},
	}
	var names []string
	for _, d := range defs {
		c := &resourcev1.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: g.sc.Name + "-" + d.suffix, Labels: map[string]string{ScenarioLabel: g.sc.Name}}}
		for _, e := range d.exprs {
			c.Spec.Selectors = append(c.Spec.Selectors, resourcev1.DeviceSelector{CEL: &resourcev1.CELDeviceSelector{Expression: e}})
		}
		g.sc.DeviceClasses = append(g.sc.DeviceClasses, c)
		names = append(names, c.Name)
	}
	return names
}

func modelIs(model string) string {
	return fmt.Sprintf("device.attributes[%q].%s == %q", GPUDriver, AttrModel, model)
}

func (g *draGen) node(i int) *corev1.Node {
	name := fmt.Sprintf("%s-n%02d", g.sc.Name, i)
	labels := map[string]string{
		corev1.LabelHostname:     name,
		ScenarioLabel:            g.sc.Name,
		corev1.LabelTopologyZone: pick(g.stream("node zone"), zones[:2]),
	}
	r := g.stream("node size")
	cpu, memory := pick(r, []int64{2000, 4000, 8000, 16000, 32000}), pick(r, []int64{8, 16, 32, 64, 128})
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    milliCPU(cpu),
		corev1.ResourceMemory: gibibytes(memory),
		corev1.ResourcePods:   countOf(110),
	}
	// 0-8 GPUs of one model, or (a fifth of GPU nodes) half a100s with 40
	// GiB and half h100s, so that a node may satisfy one alternative of a
	// request and not the other.
	var devices []gpuModel
	r = g.stream("devices")
	if count := pick(r, []int{0, 1, 2, 4, 4, 8, 8, 1 + r.IntN(MaxGPUs)}); count > 0 {
		m := pick(r, gpuModels)
		mixed := count > 1 && chance(r, 0.2)
		for d := range count {
			if mixed {
				m = gpuModels[0]
				if d >= count/2 {
					m = gpuModels[2]
				}
			}
			devices = append(devices, m)
		}
	}
	g.devices = append(g.devices, devices)
	g.free = append(g.free, make([]bool, len(devices)))
	for d := range devices {
		g.free[i][d] = true
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Status: corev1.NodeStatus{
			Capacity:    capacity,
			Allocatable: capacity.DeepCopy(),
			Conditions:  []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", Message: "conformance node"}},
		},
	}
}

// slice is the node's ResourceSlice: one pool named after the node, one
// slice, a device per GPU. A node without GPUs mostly publishes nothing,
// sometimes an empty slice, as a driver with nothing to offer does.
func (g *draGen) slice(i int) *resourcev1.ResourceSlice {
	node := g.sc.Nodes[i].Name
	if len(g.devices[i]) == 0 && !chance(g.stream("empty slices"), 0.3) {
		return nil
	}
	s := &resourcev1.ResourceSlice{
		ObjectMeta: metav1.ObjectMeta{Name: node + "-gpu", Labels: map[string]string{ScenarioLabel: g.sc.Name}},
		Spec: resourcev1.ResourceSliceSpec{
			Driver:   GPUDriver,
			NodeName: ptr(node),
			Pool:     resourcev1.ResourcePool{Name: node, Generation: 1, ResourceSliceCount: 1},
		},
	}
	for d, m := range g.devices[i] {
		s.Spec.Devices = append(s.Spec.Devices, resourcev1.Device{
			Name: deviceName(d),
			Attributes: map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{
				AttrModel:  {StringValue: ptr(m.model)},
				AttrMemory: {IntValue: ptr(m.memory)},
			},
			Capacity: map[resourcev1.QualifiedName]resourcev1.DeviceCapacity{
				CapMemory: {Value: gibibytes(m.memory)},
			},
		})
	}
	return s
}

// allocatedAt is when every allocated claim of a scenario was allocated.
var allocatedAt = metav1.Date(2026, time.January, 1, 0, 0, 0, 0, time.UTC)

func deviceName(d int) string { return "gpu" + strconv.Itoa(d) }

func (g *draGen) freeCount(i int) int {
	n := 0
	for _, f := range g.free[i] {
		if f {
			n++
		}
	}
	return n
}

// allocatedClaim is a claim for count GPUs of any model, allocated as the
// scheduler would have allocated it on node i, with count free devices
// drawn at random (so the free ones are scattered, not the first).
func (g *draGen) allocatedClaim(namespace, name string, i, count int) *resourcev1.ResourceClaim {
	node := g.sc.Nodes[i].Name
	claim := &resourcev1.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{{
			Name: RequestName,
			Exactly: &resourcev1.ExactDeviceRequest{
				DeviceClassName: g.classes[0], AllocationMode: resourcev1.DeviceAllocationModeExactCount, Count: int64(count),
			},
		}}}},
	}
	// kube-scheduler v1.37 stamps every allocation it writes, and adds the
	// stamp to an allocation without one when it reserves the claim for
	// another pod, which the API server refuses (an allocation is
	// immutable): an allocation as a scheduler writes it has one.
	allocation := &resourcev1.AllocationResult{
		NodeSelector: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{node}}},
		}}},
		AllocationTimestamp: &allocatedAt,
	}
	for _, d := range g.stream("claim allocation").Perm(len(g.free[i])) {
		if count == 0 {
			break
		}
		if !g.free[i][d] {
			continue
		}
		g.free[i][d] = false
		count--
		allocation.Devices.Results = append(allocation.Devices.Results, resourcev1.DeviceRequestAllocationResult{
			Request: RequestName, Driver: GPUDriver, Pool: node, Device: deviceName(d),
		})
	}
	claim.Status.Allocation = allocation
	return claim
}

// reserveFor reserves claim for pod. The UID is left empty: the harness
// fills in the created pod's.
func (g *draGen) reserveFor(claim *resourcev1.ResourceClaim, pod *corev1.Pod) {
	claim.Status.ReservedFor = append(claim.Status.ReservedFor, resourcev1.ResourceClaimConsumerReference{Resource: "pods", Name: pod.Name})
}

// runningPod adds a pod bound to node i that takes some of its cpu and
// memory, using claim when one is named.
func (g *draGen) runningPod(i int, namespace, claim string) *corev1.Pod {
	node := g.sc.Nodes[i]
	alloc := node.Status.Allocatable
	r := g.stream("running pods")
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: fmt.Sprintf("%s-r%03d", g.sc.Name, g.pods), Labels: map[string]string{LabelApp: pick(r, apps)}},
		Spec: corev1.PodSpec{
			NodeName:          node.Name,
			PriorityClassName: pick(r, []string{HighPriority, MidPriority}),
			Containers: []corev1.Container{{Name: "main", Image: images[0].pod, Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceCPU:    milliCPU(alloc.Cpu().MilliValue() * pick(r, []int64{10, 25, 40}) / 100),
				corev1.ResourceMemory: bytesOf(alloc.Memory().Value() * pick(r, []int64{10, 25, 40}) / 100 / mi * mi),
			}}}},
		},
	}
	if claim != "" {
		pod.Spec.ResourceClaims = []corev1.PodResourceClaim{{Name: "gpus", ResourceClaimName: ptr(claim)}}
		pod.Spec.Containers[0].Resources.Claims = []corev1.ResourceClaim{{Name: "gpus"}}
	}
	g.pods++
	g.sc.Running = append(g.sc.Running, pod)
	return pod
}

// pendingPod is the pod both schedulers decide on: cpu and memory as any
// pod, sometimes a zone, and one or two claims.
func (g *draGen) pendingPod() *corev1.Pod {
	r := g.stream("pending resources")
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: g.mainNamespace, Name: g.sc.Name + "-pending", Labels: map[string]string{LabelApp: "ml"}},
		Spec: corev1.PodSpec{
			PriorityClassName: pick(r, []string{"", MidPriority}),
			Containers:        []corev1.Container{{Name: "main", Image: images[2].pod}},
		},
	}
	req := corev1.ResourceList{}
	if cpu := pick(r, []int64{0, 100, 250, 500, 500, 1000, 1000, 2000, 4000, 12000}); cpu > 0 {
		req[corev1.ResourceCPU] = milliCPU(cpu)
	}
	if memory := pick(r, []int64{0, 256 * mi, gi, 2 * gi, 4 * gi, 8 * gi, 48 * gi}); memory > 0 {
		req[corev1.ResourceMemory] = bytesOf(memory)
	}
	if len(req) > 0 {
		pod.Spec.Containers[0].Resources.Requests = req
	}
	if r := g.stream("pending node selector"); chance(r, 0.1) {
		pod.Spec.NodeSelector = map[string]string{corev1.LabelTopologyZone: pick(r, zones[:2])}
	}
	shared := false
	r = g.stream("pending claims")
	for c := range 1 + boolInt(chance(r, 0.35)) {
		podClaim := corev1.PodResourceClaim{Name: "c" + strconv.Itoa(c)}
		switch x := r.Float64(); {
		case x < 0.15 && !shared && g.sharedClaim(&podClaim):
			shared = true
		case x < 0.4:
			t := &resourcev1.ResourceClaimTemplate{
				ObjectMeta: metav1.ObjectMeta{Namespace: g.mainNamespace, Name: fmt.Sprintf("%s-tmpl-%d", g.sc.Name, c)},
				Spec:       resourcev1.ResourceClaimTemplateSpec{Spec: g.claimSpec()},
			}
			g.sc.ResourceClaimTemplates = append(g.sc.ResourceClaimTemplates, t)
			podClaim.ResourceClaimTemplateName = ptr(t.Name)
		default:
			claim := &resourcev1.ResourceClaim{
				ObjectMeta: metav1.ObjectMeta{Namespace: g.mainNamespace, Name: fmt.Sprintf("%s-claim-%d", g.sc.Name, c)},
				Spec:       g.claimSpec(),
			}
			g.sc.ResourceClaims = append(g.sc.ResourceClaims, claim)
			podClaim.ResourceClaimName = ptr(claim.Name)
		}
		pod.Spec.ResourceClaims = append(pod.Spec.ResourceClaims, podClaim)
		pod.Spec.Containers[0].Resources.Claims = append(pod.Spec.Containers[0].Resources.Claims, corev1.ResourceClaim{Name: podClaim.Name})
	}
	return pod
}

// sharedClaim points pc at a claim already allocated on a node with free
// devices, reserved for a running pod there or for nobody: the pending pod
// can only go to that node. It reports false when no node has a free device.
func (g *draGen) sharedClaim(pc *corev1.PodResourceClaim) bool {
	var candidates []int
	for i := range g.sc.Nodes {
		if g.freeCount(i) > 0 {
			candidates = append(candidates, i)
		}
	}
	if len(candidates) == 0 {
		return false
	}
	r := g.stream("shared claim")
	i := pick(r, candidates)
	claim := g.allocatedClaim(g.mainNamespace, g.sc.Name+"-shared", i, 1+r.IntN(min(2, g.freeCount(i))))
	if chance(r, 0.5) {
		g.reserveFor(claim, g.runningPod(i, g.mainNamespace, claim.Name))
	}
	g.sc.ResourceClaims = append(g.sc.ResourceClaims, claim)
	pc.ResourceClaimName = ptr(claim.Name)
	return true
}

// claimSpec is a new claim's spec: one or two requests, sometimes with
// all devices on one node of the same model.
func (g *draGen) claimSpec() resourcev1.ResourceClaimSpec {
	r := g.stream("claim specs")
	var spec resourcev1.ResourceClaimSpec
	names := []string{"gpu", "extra"}
	for i := range 1 + boolInt(chance(r, 0.3)) {
		spec.Devices.Requests = append(spec.Devices.Requests, g.request(r, names[i]))
	}
	if chance(r, 0.15) {
		spec.Devices.Constraints = []resourcev1.DeviceConstraint{{MatchAttribute: ptr(resourcev1.FullyQualifiedName(GPUDriver + "/" + AttrModel))}}
	}
	return spec
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// request is one device request: most ask for an exact count (1-8) or all
// matching devices of a class, sometimes with a selector of their own; a
// third list two alternatives (firstAvailable), which DynamicResources
// scores by the one allocated.
func (g *draGen) request(r *rand.Rand, name string) resourcev1.DeviceRequest {
	if chance(r, 0.35) {
		req := resourcev1.DeviceRequest{Name: name}
		for _, sub := range []string{"first", "second"} {
			e := g.exact(r)
			req.FirstAvailable = append(req.FirstAvailable, resourcev1.DeviceSubRequest{
				Name: sub, DeviceClassName: e.DeviceClassName, Selectors: e.Selectors, AllocationMode: e.AllocationMode, Count: e.Count,
			})
		}
		return req
	}
	return resourcev1.DeviceRequest{Name: name, Exactly: g.exact(r)}
}

func (g *draGen) exact(r *rand.Rand) *resourcev1.ExactDeviceRequest {
	class := pick(r, g.classes)
	if chance(r, 0.02) {
		class = g.sc.Name + "-tpu" // no such class
	}
	e := &resourcev1.ExactDeviceRequest{DeviceClassName: class}
	if chance(r, 0.06) {
		e.AllocationMode = resourcev1.DeviceAllocationModeAll
	} else {
		e.AllocationMode = resourcev1.DeviceAllocationModeExactCount
		e.Count = pick(r, []int64{1, 1, 1, 1, 2, 2, 3, 4, 1 + r.Int64N(MaxGPUs)})
	}
	if chance(r, 0.3) {
		var expr string
		switch r.IntN(4) {
		case 0:
			expr = modelIs("a100")
		case 1:
			expr = modelIs("h100")
		case 2:
			expr = fmt.Sprintf("device.attributes[%q].%s >= %d", GPUDriver, AttrMemory, pick(r, []int{40, 80}))
		default:
			expr = fmt.Sprintf("device.capacity[%q].%s.compareTo(quantity(%q)) >= 0", GPUDriver, CapMemory, pick(r, []string{"40Gi", "80Gi"}))
		}
		e.Selectors = []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{Expression: expr}}}
	}
	return e
}

// ExtendedResourceProb is the share of DRA scenarios whose pending pod
// requests an extended resource a DeviceClass backs (DRAExtendedResource).
const ExtendedResourceProb = 0.3

// ExtendedResourceName is the extended resource a DRA scenario's class
// backs, when it backs one: a name of the scenario's own, since classes of
// an earlier scenario may still be in kube-scheduler's resolver (a
// deletion seen late) and two classes naming one resource resolve to the
// newer.
func ExtendedResourceName(scenario string) corev1.ResourceName {
	return corev1.ResourceName(scenario + ".example.com/gpu")
}

// ImplicitExtendedResourceName is the extended resource every DeviceClass
// backs by its name alone.
func ImplicitExtendedResourceName(class string) corev1.ResourceName {
	return corev1.ResourceName(resourcev1.ResourceDeviceClassPrefix + class)
}

// extendedResources turns the scenario into one of extended resources
// backed by DRA, changing what GenerateDRA made: one class backs
// ExtendedResourceName; some nodes advertise that resource through a
// device plugin (its allocatable, which running pods there use some of) or
// advertise it as 0, which leaves it to DRA as not advertising it does; the
// pending pod requests it (requests equal to limits, as the API server
// requires of extended resources) by that name or the class's implicit one,
// sometimes also the implicit one of another class, sometimes in an init
// container or a sidecar too, and sometimes has no claims of its own.
func (g *draGen) extendedResources(r *rand.Rand) {
	name := ExtendedResourceName(g.sc.Name)
	ci := r.IntN(len(g.sc.DeviceClasses))
	class := g.sc.DeviceClasses[ci]
	class.Spec.ExtendedResourceName = ptr(string(name))

	nodes := g.stream("extended resource nodes")
	for i, node := range g.sc.Nodes {
		switch x := nodes.Float64(); {
		case x < 0.3:
			count := pick(nodes, []int64{1, 2, 4, 8})
			node.Status.Capacity[name] = countOf(count)
			node.Status.Allocatable[name] = countOf(count)
			for range nodes.IntN(3) {
				if chance(nodes, 0.5) {
					continue
				}
				p := g.runningPod(i, g.mainNamespace, "")
				extendedRequest(&p.Spec.Containers[0], name, 1+nodes.Int64N(count))
			}
		case x < 0.4:
			node.Status.Capacity[name] = countOf(0)
			node.Status.Allocatable[name] = countOf(0)
		}
	}

	primary := name
	if chance(r, 0.3) {
		primary = ImplicitExtendedResourceName(class.Name)
	}
	resources := []corev1.ResourceName{primary}
	pod := g.sc.Pending
	main := &pod.Spec.Containers[0]
	extendedRequest(main, primary, pick(r, []int64{1, 1, 2, 2, 3, 4}))
	if chance(r, 0.2) {
		other := g.sc.DeviceClasses[(ci+1+r.IntN(len(g.sc.DeviceClasses)-1))%len(g.sc.DeviceClasses)]
		second := ImplicitExtendedResourceName(other.Name)
		extendedRequest(main, second, 1+r.Int64N(2))
		resources = append(resources, second)
	}
	if chance(r, 0.2) {
		c := corev1.Container{Name: "init", Image: images[3].pod}
		extendedRequest(&c, primary, pick(r, []int64{1, 2, 3, 4}))
		pod.Spec.InitContainers = append(pod.Spec.InitContainers, c)
	}
	if chance(r, 0.15) {
		c := corev1.Container{Name: "sidecar", Image: images[3].pod, RestartPolicy: ptr(corev1.ContainerRestartPolicyAlways)}
		extendedRequest(&c, primary, 1+r.Int64N(2))
		pod.Spec.InitContainers = append(pod.Spec.InitContainers, c)
	}
	if chance(r, 0.3) {
		// Only the extended resources: the claims and templates made for
		// the pod's own claims stay, unused.
		pod.Spec.ResourceClaims = nil
		main.Resources.Claims = nil
	}
	slices.Sort(resources)
	g.sc.ExtendedResources = resources
}

// extendedRequest makes container request count of the extended resource
// name, with an equal limit.
func extendedRequest(c *corev1.Container, name corev1.ResourceName, count int64) {
	if c.Resources.Requests == nil {
		c.Resources.Requests = corev1.ResourceList{}
	}
	if c.Resources.Limits == nil {
		c.Resources.Limits = corev1.ResourceList{}
	}
	c.Resources.Requests[name] = countOf(count)
	c.Resources.Limits[name] = countOf(count)
}
