// Command examplegen writes examples/gpu-cluster.yaml: a deterministic
// snapshot of a made-up ML training cluster, in the shape `kubectl get
// namespaces,priorityclasses,nodes,resourcequotas,podgroups,pods -A -o yaml`
// prints, with one Pending gang (ml-research/llm-pretrain) that does not fit.
//
//	go run ./hack/examplegen -out examples/gpu-cluster.yaml
//
// The scenario and the hand computation of the expected verdict are described
// in examples/README.md; keep the two in step when changing the numbers here.
package main

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "examplegen:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("examplegen", flag.ContinueOnError)
	out := fs.String("out", "examples/gpu-cluster.yaml", "file to write, - for standard output")
	if err := fs.Parse(args); err != nil {
		return err
	}
	data, err := render()
	if err != nil {
		return err
	}
	if *out == "-" {
		_, err = os.Stdout.Write(data)
		return err
	}
	if err := os.MkdirAll(filepath.Dir(*out), 0o755); err != nil {
		return err
	}
	return os.WriteFile(*out, data, 0o644)
}

// Fixed clock: the cluster was created at t0, the snapshot is taken at now.
var (
	t0  = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	now = t0.Add(9*24*time.Hour + 9*time.Hour) // 2026-11-10T09:00:00Z
)

func at(d time.Duration) metav1.Time { return metav1.NewTime(t0.Add(d)) }

const (
	day  = 24 * time.Hour
	hour = time.Hour
	mins = time.Minute
)

// Names used across the scenario.
const (
	zoneKey     = "topology.kubernetes.io/zone"
	blockKey    = "network.topology.kubernetes.io/block"
	gpuProduct  = "nvidia.com/gpu.product"
	a100        = "NVIDIA-A100-SXM4-80GB"
	gpuResource = corev1.ResourceName("nvidia.com/gpu")
	zoneA       = "us-east-1a"
	zoneB       = "us-east-1b"

	kubeletVersion = "v1.37.1"
	pytorchImage   = "nvcr.io/nvidia/pytorch:26.09-py3"
)

// hash returns a stable digest of the parts.
func hash(parts ...string) []byte {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return h.Sum(nil)
}

// uuid formats a name-derived digest as a version 4 UUID.
func uuid(parts ...string) string {
	b := hash(parts...)[:16]
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	x := hex.EncodeToString(b)
	return x[0:8] + "-" + x[8:12] + "-" + x[12:16] + "-" + x[16:20] + "-" + x[20:32]
}

// suffix is a name suffix like the ones controllers generate, from the same
// alphabet (k8s.io/apimachinery/pkg/util/rand).
func suffix(n int, parts ...string) string {
	const alphabet = "bcdfghjklmnpqrstvwxz2456789"
	b := hash(parts...)
	s := make([]byte, n)
	for i := range s {
		s[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(s)
}

func q(s string) resource.Quantity { return resource.MustParse(s) }

func rl(kv ...string) corev1.ResourceList {
	l := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		l[corev1.ResourceName(kv[i])] = q(kv[i+1])
	}
	return l
}

// ---------------------------------------------------------------- nodes

type instanceType struct {
	name          string
	cpu, cpuAlloc string // capacity; allocatable after kube-reserved
	memKi         int64  // capacity as the kernel reports it
	diskKi        int64
	gpus          int
}

var (
	m6i2x = instanceType{name: "m6i.2xlarge", cpu: "8", cpuAlloc: "7910m", memKi: 32408820, diskKi: 104845292}
	m6i8x = instanceType{name: "m6i.8xlarge", cpu: "32", cpuAlloc: "31850m", memKi: 131860404, diskKi: 209702892}
	p4de  = instanceType{name: "p4de.24xlarge", cpu: "96", cpuAlloc: "95690m", memKi: 1187430520, diskKi: 524275692, gpus: 8}
)

type nodeInfo struct {
	node    *corev1.Node
	ip      string
	podCIDR int
	nextPod int
	gpu     bool
	created time.Duration
	role    string // "control-plane", "cpu" or "gpu"
}

type cluster struct {
	nodes     []*nodeInfo
	byName    map[string]*nodeInfo
	pods      []*corev1.Pod
	prio      map[string]*schedulingv1.PriorityClass
	zoneCount map[string]int
}

func (c *cluster) addNode(name, zone, role string, inst instanceType, created time.Duration, block string) *nodeInfo {
	// One /19 subnet per zone: 10.0.0.0/19 in zone a, 10.0.32.0/19 in zone b.
	c.zoneCount[zone]++
	third := 0
	if zone == zoneB {
		third = 32
	}
	ip := fmt.Sprintf("10.0.%d.%d", third+1+c.zoneCount[zone]/200, 10+c.zoneCount[zone]%200)
	labels := map[string]string{
		"beta.kubernetes.io/arch":          "amd64",
		"beta.kubernetes.io/os":            "linux",
		"kubernetes.io/arch":               "amd64",
		"kubernetes.io/hostname":           name,
		"kubernetes.io/os":                 "linux",
		"node.kubernetes.io/instance-type": inst.name,
		"topology.kubernetes.io/region":    "us-east-1",
		zoneKey:                            zone,
	}
	var taints []corev1.Taint
	switch role {
	case "control-plane":
		labels["node-role.kubernetes.io/control-plane"] = ""
		labels["node.kubernetes.io/exclude-from-external-load-balancers"] = ""
		taints = append(taints, corev1.Taint{Key: "node-role.kubernetes.io/control-plane", Effect: corev1.TaintEffectNoSchedule})
	case "cpu":
		labels["node-pool"] = "cpu"
	case "gpu":
		labels["node-pool"] = "gpu-a100"
		labels[gpuProduct] = a100
		labels["nvidia.com/gpu.count"] = "8"
		labels["nvidia.com/gpu.memory"] = "81920"
		labels[blockKey] = block
		taints = append(taints, corev1.Taint{Key: "nvidia.com/gpu", Value: "present", Effect: corev1.TaintEffectNoSchedule})
	}

	capacity := corev1.ResourceList{
		corev1.ResourceCPU:              q(inst.cpu),
		corev1.ResourceMemory:           *resource.NewQuantity(inst.memKi*1024, resource.BinarySI),
		corev1.ResourceEphemeralStorage: *resource.NewQuantity(inst.diskKi*1024, resource.BinarySI),
		corev1.ResourcePods:             q("110"),
		"hugepages-1Gi":                 q("0"),
		"hugepages-2Mi":                 q("0"),
	}
	// Allocatable as a kubelet with kube-reserved (255Mi + 11Mi per pod),
	// a 100Mi memory eviction threshold and a 10% nodefs threshold reports it.
	memReservedKi := int64(255+11*110+100) * 1024
	diskBytes := inst.diskKi * 1024
	allocatable := corev1.ResourceList{
		corev1.ResourceCPU:              q(inst.cpuAlloc),
		corev1.ResourceMemory:           *resource.NewQuantity((inst.memKi-memReservedKi)*1024, resource.BinarySI),
		corev1.ResourceEphemeralStorage: *resource.NewQuantity(diskBytes/10*9-1<<30, resource.DecimalSI),
		corev1.ResourcePods:             q("110"),
		"hugepages-1Gi":                 q("0"),
		"hugepages-2Mi":                 q("0"),
	}
	if inst.gpus > 0 {
		capacity[gpuResource] = *resource.NewQuantity(int64(inst.gpus), resource.DecimalSI)
		allocatable[gpuResource] = *resource.NewQuantity(int64(inst.gpus), resource.DecimalSI)
	}

	heartbeat := metav1.NewTime(now.Add(-time.Duration(binary.BigEndian.Uint16(hash("hb", name))%240) * time.Second))
	cond := func(t corev1.NodeConditionType, s corev1.ConditionStatus, reason, msg string) corev1.NodeCondition {
		return corev1.NodeCondition{Type: t, Status: s, Reason: reason, Message: msg,
			LastHeartbeatTime: heartbeat, LastTransitionTime: at(created + 40*time.Second)}
	}
	h := hash("machine", name)
	idx := len(c.nodes)
	n := &corev1.Node{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Node"},
		ObjectMeta: metav1.ObjectMeta{
			Name:              name,
			Labels:            labels,
			CreationTimestamp: at(created),
		},
		Spec: corev1.NodeSpec{
			PodCIDR:    fmt.Sprintf("10.244.%d.0/24", idx),
			PodCIDRs:   []string{fmt.Sprintf("10.244.%d.0/24", idx)},
			ProviderID: fmt.Sprintf("aws:///%s/i-0%s", zone, hex.EncodeToString(h[:8])[:16]),
			Taints:     taints,
		},
		Status: corev1.NodeStatus{
			Capacity:    capacity,
			Allocatable: allocatable,
			// Only Ready of the kubelet's conditions, to keep the file small.
			Conditions: []corev1.NodeCondition{
				cond(corev1.NodeReady, corev1.ConditionTrue, "KubeletReady", "kubelet is posting ready status"),
			},
			Addresses: []corev1.NodeAddress{
				{Type: corev1.NodeInternalIP, Address: ip},
				{Type: corev1.NodeHostName, Address: name},
			},
			DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: 10250}},
			NodeInfo: corev1.NodeSystemInfo{
				MachineID:               hex.EncodeToString(h[8:24]),
				SystemUUID:              "ec2" + uuid("system", name)[3:],
				BootID:                  uuid("boot", name),
				KernelVersion:           "6.8.0-1036-aws",
				OSImage:                 "Ubuntu 24.04.3 LTS",
				ContainerRuntimeVersion: "containerd://2.1.4",
				KubeletVersion:          kubeletVersion,
				OperatingSystem:         "linux",
				Architecture:            "amd64",
			},
			Images: nodeImages(role),
		},
	}
	ni := &nodeInfo{node: n, ip: ip, podCIDR: idx, gpu: role == "gpu", created: created, role: role}
	c.nodes = append(c.nodes, ni)
	c.byName[name] = ni
	return ni
}

func image(repo, tag string, size int64) corev1.ContainerImage {
	d := hex.EncodeToString(hash("image", repo, tag))
	return corev1.ContainerImage{Names: []string{repo + "@sha256:" + d, repo + ":" + tag}, SizeBytes: size}
}

func nodeImages(role string) []corev1.ContainerImage {
	imgs := []corev1.ContainerImage{image("quay.io/cilium/cilium", "v1.18.3", 251_684_312)}
	if role == "gpu" {
		imgs = append([]corev1.ContainerImage{
			image("nvcr.io/nvidia/pytorch", "26.09-py3", 10_873_419_022),
			image("nvcr.io/nvidia/k8s-device-plugin", "v0.18.0", 149_382_736),
		}, imgs...)
	}
	return imgs
}

// ---------------------------------------------------------------- pods

func ctr(name, img string, requests, limits corev1.ResourceList) corev1.Container {
	return corev1.Container{
		Name:            name,
		Image:           img,
		ImagePullPolicy: corev1.PullIfNotPresent,
		Resources:       corev1.ResourceRequirements{Requests: requests, Limits: limits},
	}
}

// gpuCtr is a training container sized per GPU (11 cpu and 120Gi per GPU
// unless given), requests equal to limits (Guaranteed).
func gpuCtr(img string, gpus int, cpu, mem string) corev1.Container {
	if cpu == "" {
		cpu = strconv.Itoa(11 * gpus)
		mem = strconv.Itoa(120*gpus) + "Gi"
	}
	r := rl("cpu", cpu, "memory", mem, string(gpuResource), strconv.Itoa(gpus))
	return ctr("trainer", img, r, r.DeepCopy())
}

var defaultTolerations = []corev1.Toleration{
	{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr(int64(300))},
	{Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr(int64(300))},
}

var gpuToleration = corev1.Toleration{Key: "nvidia.com/gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}

func ptr[T any](v T) *T { return &v }

// pod builds a pod as the API server stores it after defaulting and
// admission (priority, default tolerations).
func (c *cluster) pod(ns, name string, created time.Duration, priorityClass string, labels map[string]string, containers ...corev1.Container) *corev1.Pod {
	p := &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: ns, Labels: labels, CreationTimestamp: at(created),
		},
		Spec: corev1.PodSpec{
			Containers:                    containers,
			RestartPolicy:                 corev1.RestartPolicyAlways,
			TerminationGracePeriodSeconds: ptr(int64(30)),
			DNSPolicy:                     corev1.DNSClusterFirst,
			ServiceAccountName:            "default",
			SecurityContext:               &corev1.PodSecurityContext{},
			SchedulerName:                 corev1.DefaultSchedulerName,
			Tolerations:                   append([]corev1.Toleration(nil), defaultTolerations...),
			EnableServiceLinks:            ptr(true),
			PreemptionPolicy:              ptr(corev1.PreemptLowerPriority),
			Priority:                      ptr(int32(0)),
		},
		Status: corev1.PodStatus{Phase: corev1.PodPending, QOSClass: qos(containers)},
	}
	if priorityClass != "" {
		pc := c.prio[priorityClass]
		if pc == nil {
			panic("unknown priority class " + priorityClass)
		}
		p.Spec.PriorityClassName = priorityClass
		p.Spec.Priority = ptr(pc.Value)
		p.Spec.PreemptionPolicy = pc.PreemptionPolicy
	}
	c.pods = append(c.pods, p)
	return p
}

// daemon builds a DaemonSet-style pod that tolerates every taint.
func (c *cluster) daemon(name string, node *corev1.Node, hostNetwork bool, containers ...corev1.Container) *corev1.Pod {
	n := c.byName[node.Name]
	p := c.pod("kube-system", name+"-"+suffix(5, name, node.Name), n.created+time.Minute, "system-node-critical",
		map[string]string{"k8s-app": name}, containers...)
	p.Spec.Tolerations = []corev1.Toleration{{Operator: corev1.TolerationOpExists}}
	p.Spec.HostNetwork = hostNetwork
	p.Spec.ServiceAccountName = name
	c.run(p, node.Name, n.created+2*time.Minute)
	return p
}

// run binds a pod to a node and marks it Running.
func (c *cluster) run(p *corev1.Pod, node string, started time.Duration) {
	n := c.byName[node]
	if n == nil {
		panic("unknown node " + node)
	}
	p.Spec.NodeName = node
	n.nextPod++
	podIP := fmt.Sprintf("10.244.%d.%d", n.podCIDR, 1+n.nextPod)
	if p.Spec.HostNetwork {
		podIP = n.ip
	}
	st := at(started)
	p.Status.Phase = corev1.PodRunning
	p.Status.HostIP = n.ip
	p.Status.HostIPs = []corev1.HostIP{{IP: n.ip}}
	p.Status.PodIP = podIP
	p.Status.PodIPs = []corev1.PodIP{{IP: podIP}}
	p.Status.StartTime = &st
}

func qos(cs []corev1.Container) corev1.PodQOSClass {
	some, guaranteed := false, true
	for _, c := range cs {
		if len(c.Resources.Requests) > 0 || len(c.Resources.Limits) > 0 {
			some = true
		}
		for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			l, ok := c.Resources.Limits[r]
			if !ok {
				guaranteed = false
				continue
			}
			if req, ok := c.Resources.Requests[r]; ok && req.Cmp(l) != 0 {
				guaranteed = false
			}
		}
	}
	switch {
	case !some:
		return corev1.PodQOSBestEffort
	case guaranteed:
		return corev1.PodQOSGuaranteed
	}
	return corev1.PodQOSBurstable
}

// replicaName names a pod the way a Deployment's ReplicaSet would.
func replicaName(deploy string, i int) string {
	return deploy + "-" + suffix(10, deploy, "rs") + "-" + suffix(5, deploy, strconv.Itoa(i))
}

// ---------------------------------------------------------------- scenario

func build() *cluster {
	c := &cluster{byName: map[string]*nodeInfo{}, prio: map[string]*schedulingv1.PriorityClass{}, zoneCount: map[string]int{}}

	// Priority classes: the two built-in ones plus three for ML workloads.
	for _, pc := range []struct {
		name    string
		value   int32
		policy  corev1.PreemptionPolicy
		desc    string
		created time.Duration
	}{
		{"system-cluster-critical", 2000000000, corev1.PreemptLowerPriority, "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.", 0},
		{"system-node-critical", 2000001000, corev1.PreemptLowerPriority, "Used for system critical pods that must not be moved from their current node.", 0},
		{"training-high", 100000, corev1.PreemptLowerPriority, "Production and flagship training runs; may preempt lower-priority training.", 2 * hour},
		{"training-low", 1000, corev1.PreemptLowerPriority, "Exploratory training and notebooks; preemptible by training-high.", 2 * hour},
		{"batch-low", 100, corev1.PreemptNever, "Sweeps, HPO trials and evaluations; never preempts, first to be preempted.", 2 * hour},
	} {
		c.prio[pc.name] = &schedulingv1.PriorityClass{
			TypeMeta:         metav1.TypeMeta{APIVersion: "scheduling.k8s.io/v1", Kind: "PriorityClass"},
			ObjectMeta:       metav1.ObjectMeta{Name: pc.name, CreationTimestamp: at(pc.created)},
			Value:            pc.value,
			PreemptionPolicy: ptr(pc.policy),
			Description:      pc.desc,
		}
	}

	// Nodes: 3 control-plane, 8 CPU workers, 24 GPU nodes (12 per zone, 3
	// blocks of 4 per zone).
	for i, z := range []string{zoneA, zoneB, zoneA} {
		c.addNode(fmt.Sprintf("control-plane-%d", i), z, "control-plane", m6i2x, time.Duration(i)*mins, "")
	}
	for _, z := range []string{zoneA, zoneB} {
		for i := range 4 {
			c.addNode(fmt.Sprintf("cpu-%s-%d", z[len(z)-1:], i), z, "cpu", m6i8x, 30*mins+time.Duration(len(c.nodes))*mins, "")
		}
	}
	for _, z := range []string{zoneA, zoneB} {
		for i := range 12 {
			c.addNode(fmt.Sprintf("gpu-%s-%02d", z[len(z)-1:], i), z, "gpu", p4de, hour+time.Duration(len(c.nodes))*mins,
				fmt.Sprintf("%s-block-%d", z, i/4+1))
		}
	}

	// gpu-b-10 went NotReady this morning: the node lifecycle controller
	// tainted it, the kubelet reports Ready=False.
	nr := c.byName["gpu-b-10"].node
	notReadySince := at(9*day + 7*hour + 41*mins)
	nr.Spec.Taints = append(nr.Spec.Taints,
		corev1.Taint{Key: "node.kubernetes.io/not-ready", Effect: corev1.TaintEffectNoSchedule},
		corev1.Taint{Key: "node.kubernetes.io/not-ready", Effect: corev1.TaintEffectNoExecute, TimeAdded: &notReadySince})
	for i := range nr.Status.Conditions {
		if nr.Status.Conditions[i].Type == corev1.NodeReady {
			nr.Status.Conditions[i] = corev1.NodeCondition{
				Type: corev1.NodeReady, Status: corev1.ConditionFalse, Reason: "KubeletNotReady",
				Message:           "PLEG is not healthy: pleg was last seen active 3m12s ago; threshold is 3m0s",
				LastHeartbeatTime: nr.Status.Conditions[i].LastHeartbeatTime, LastTransitionTime: notReadySince,
			}
		}
	}
	// gpu-b-11 is cordoned and drained for an NVSwitch replacement.
	cd := c.byName["gpu-b-11"].node
	cordoned := at(8*day + 16*hour + 20*mins)
	cd.Spec.Unschedulable = true
	cd.Spec.Taints = append(cd.Spec.Taints, corev1.Taint{Key: "node.kubernetes.io/unschedulable", Effect: corev1.TaintEffectNoSchedule, TimeAdded: &cordoned})
	cd.Annotations = map[string]string{}
	cd.Annotations["ops.example.com/maintenance"] = "NVSwitch replacement, ticket OPS-4182"

	// kube-system: static control-plane pods, DaemonSets on every node,
	// cluster add-ons on CPU nodes.
	for _, ni := range c.nodes {
		n := ni.node
		if ni.role == "control-plane" {
			for _, s := range []struct{ name, image, cpu, mem string }{
				{"etcd", "registry.k8s.io/etcd:3.6.5-0", "100m", "100Mi"},
				{"kube-apiserver", "registry.k8s.io/kube-apiserver:" + kubeletVersion, "250m", ""},
				{"kube-controller-manager", "registry.k8s.io/kube-controller-manager:" + kubeletVersion, "200m", ""},
				{"kube-scheduler", "registry.k8s.io/kube-scheduler:" + kubeletVersion, "100m", ""},
			} {
				req := rl("cpu", s.cpu)
				if s.mem != "" {
					req[corev1.ResourceMemory] = q(s.mem)
				}
				p := c.pod("kube-system", s.name+"-"+n.Name, ni.created+30*time.Second, "system-node-critical",
					map[string]string{"component": s.name, "tier": "control-plane"}, ctr(s.name, s.image, req, nil))
				p.Spec.HostNetwork = true
				p.Spec.Tolerations = []corev1.Toleration{{Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}}
				p.Spec.ServiceAccountName = ""
				c.run(p, n.Name, ni.created+30*time.Second)
			}
		}
		// Cilium replaces kube-proxy, so there is no kube-proxy DaemonSet.
		c.daemon("cilium", n, true, ctr("cilium-agent", "quay.io/cilium/cilium:v1.18.3", rl("cpu", "100m", "memory", "128Mi"), nil))
		if ni.gpu {
			c.daemon("nvidia-device-plugin-daemonset", n, false,
				ctr("nvidia-device-plugin-ctr", "nvcr.io/nvidia/k8s-device-plugin:v0.18.0", rl("cpu", "50m", "memory", "64Mi"), rl("memory", "256Mi")))
		}
	}
	for i, node := range []string{"cpu-a-0", "cpu-b-0"} {
		p := c.pod("kube-system", replicaName("coredns", i), 35*mins, "system-cluster-critical", map[string]string{"k8s-app": "kube-dns"},
			ctr("coredns", "registry.k8s.io/coredns/coredns:v1.13.1", rl("cpu", "100m", "memory", "70Mi"), rl("memory", "170Mi")))
		p.Spec.DNSPolicy = corev1.DNSDefault
		p.Spec.ServiceAccountName = "coredns"
		c.run(p, node, 36*mins)
	}
	for _, s := range []struct{ name, node, image, cpu, mem string }{
		{"metrics-server", "cpu-a-1", "registry.k8s.io/metrics-server/metrics-server:v0.8.0", "100m", "200Mi"},
		{"cilium-operator", "cpu-b-1", "quay.io/cilium/operator-generic:v1.18.3", "100m", "128Mi"},
	} {
		p := c.pod("kube-system", replicaName(s.name, 0), 35*mins, "system-cluster-critical", map[string]string{"k8s-app": s.name},
			ctr(s.name, s.image, rl("cpu", s.cpu, "memory", s.mem), nil))
		p.Spec.ServiceAccountName = s.name
		c.run(p, s.node, 36*mins)
	}

	// CPU services (no priority class: priority 0).
	for _, s := range []struct {
		ns, deploy, image, cpu, mem string
		nodes                       []string
	}{
		{"default", "mlflow-tracking", "ghcr.io/mlflow/mlflow:v3.5.0", "1", "4Gi", []string{"cpu-a-2", "cpu-b-2"}},
		{"ml-prod", "feature-store-api", "registry.example.com/ml/feature-store-api:2.14.1", "2", "8Gi", []string{"cpu-a-0", "cpu-a-3", "cpu-b-3"}},
		{"ml-prod", "model-registry", "registry.example.com/ml/model-registry:1.9.0", "1", "2Gi", []string{"cpu-a-1", "cpu-b-1"}},
		{"ml-research", "jupyterhub-hub", "quay.io/jupyterhub/k8s-hub:4.3.1", "500m", "1Gi", []string{"cpu-a-2"}},
		{"ml-research", "tensorboard", "registry.example.com/ml/tensorboard:2.20.0", "500m", "2Gi", []string{"cpu-b-2"}},
	} {
		for i, node := range s.nodes {
			p := c.pod(s.ns, replicaName(s.deploy, i), 3*hour, "", map[string]string{"app": s.deploy},
				ctr(s.deploy, s.image, rl("cpu", s.cpu, "memory", s.mem), rl("memory", s.mem)))
			c.run(p, node, 3*hour+time.Minute)
		}
	}
	prefetch := c.pod("ml-research", "dataset-prefetch-"+suffix(5, "dataset-prefetch"), 9*day+30*mins, "batch-low",
		map[string]string{"app": "dataset-prefetch", "batch.kubernetes.io/job-name": "dataset-prefetch"},
		ctr("prefetch", "registry.example.com/ml/data-tools:0.7.2", rl("cpu", "8", "memory", "32Gi"), rl("cpu", "8", "memory", "32Gi")))
	prefetch.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
	c.run(prefetch, "cpu-b-0", 9*day+31*mins)

	// GPU training that is already running. Zone a is busy and fragmented:
	// every node but gpu-a-04 runs a 4-GPU training-high pod, most also a
	// small low-priority one. Zone b is mostly idle.
	type gpuJob struct {
		ns, name, pc string
		gpus         int
		cpu, mem     string
		created      time.Duration
		nodes        []string
	}
	gpuJobs := []gpuJob{
		{"ml-prod", "embeddings-train-worker", "training-high", 4, "", "", 5 * day, []string{"gpu-a-00", "gpu-a-01", "gpu-a-02", "gpu-a-03"}},
		{"ml-prod", "vision-ft-worker", "training-high", 4, "", "", 6 * day, []string{"gpu-a-05", "gpu-a-06", "gpu-a-08", "gpu-a-09"}},
		{"ml-prod", "ranker-train-worker", "training-high", 4, "", "", 7 * day, []string{"gpu-a-10", "gpu-a-11"}},
		{"ml-prod", "recsys-train-worker", "training-high", 8, "", "", 8 * day, []string{"gpu-b-08"}},
		{"ml-prod", "ads-ctr-train-worker", "training-high", 4, "", "", 8*day + 12*hour, []string{"gpu-b-09"}},
		{"ml-research", "tokenizer-distill-worker", "training-low", 4, "", "", 8*day + 6*hour, []string{"gpu-a-07"}},
		{"ml-research", "hpo-trial", "batch-low", 1, "10", "100Gi", 8 * day, []string{"gpu-a-03", "gpu-a-05", "gpu-a-06", "gpu-a-08", "gpu-a-09", "gpu-a-10", "gpu-a-11"}},
		{"ml-research", "sweep-lr", "batch-low", 4, "", "", 9*day + 2*hour, []string{"gpu-b-07", "gpu-b-07"}},
		{"ml-research", "ablation-small-worker", "training-low", 2, "", "", 9*day + 4*hour, []string{"gpu-b-09"}},
	}
	for _, j := range gpuJobs {
		for i, node := range j.nodes {
			p := c.pod(j.ns, fmt.Sprintf("%s-%d", j.name, i), j.created, j.pc,
				map[string]string{"app": trimWorker(j.name), "training.example.com/job": trimWorker(j.name)},
				gpuCtr(pytorchImage, j.gpus, j.cpu, j.mem))
			p.Spec.Tolerations = append(p.Spec.Tolerations, gpuToleration)
			p.Spec.RestartPolicy = corev1.RestartPolicyNever
			c.run(p, node, j.created+90*time.Second)
		}
	}
	for _, nb := range []struct{ user, node string }{{"alice", "gpu-a-00"}, {"bob", "gpu-a-01"}} {
		p := c.pod("ml-research", "notebook-gpu-"+nb.user, 7*day+10*hour, "training-low",
			map[string]string{"app": "jupyter-notebook", "hub.jupyter.org/username": nb.user},
			gpuCtr("quay.io/jupyter/pytorch-notebook:cuda12-2026-10-20", 1, "8", "64Gi"))
		p.Spec.Containers[0].Name = "notebook"
		p.Spec.Tolerations = append(p.Spec.Tolerations, gpuToleration)
		c.run(p, nb.node, 7*day+10*hour+2*time.Minute)
	}

	// A finished evaluation on gpu-b-03: terminated, so it holds nothing.
	done := c.pod("ml-research", "eval-ckpt-step-12000-"+suffix(5, "eval-ckpt"), 9*day+hour, "batch-low",
		map[string]string{"app": "eval-ckpt", "batch.kubernetes.io/job-name": "eval-ckpt-step-12000"},
		gpuCtr(pytorchImage, 8, "", ""))
	done.Spec.Tolerations = append(done.Spec.Tolerations, gpuToleration)
	done.Spec.RestartPolicy = corev1.RestartPolicyNever
	c.run(done, "gpu-b-03", 9*day+hour+time.Minute)
	done.Status.Phase = corev1.PodSucceeded
	done.Status.PodIP, done.Status.PodIPs = "", nil
	done.Status.ContainerStatuses = []corev1.ContainerStatus{{
		Name: "trainer", Image: pytorchImage, ImageID: "nvcr.io/nvidia/pytorch@sha256:" + hex.EncodeToString(hash("image", "nvcr.io/nvidia/pytorch", "26.09-py3")),
		ContainerID: "containerd://" + hex.EncodeToString(hash("container", done.Name)),
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: 0, Reason: "Completed", StartedAt: at(9*day + hour + 2*time.Minute), FinishedAt: at(9*day + 3*hour + 17*time.Minute),
			ContainerID: "containerd://" + hex.EncodeToString(hash("container", done.Name)),
		}},
	}}

	// A nightly evaluation held back by Kueue's scheduling gate.
	gated := c.pod("ml-research", "eval-llm-nightly-"+suffix(5, "eval-llm-nightly"), 9*day+6*hour, "batch-low",
		map[string]string{"app": "eval-llm-nightly", "kueue.x-k8s.io/queue-name": "research"},
		gpuCtr(pytorchImage, 4, "", ""))
	gated.Spec.Tolerations = append(gated.Spec.Tolerations, gpuToleration)
	gated.Spec.RestartPolicy = corev1.RestartPolicyNever
	gated.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: "kueue.x-k8s.io/admission"}}
	gated.Status.Conditions = []corev1.PodCondition{{
		Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonSchedulingGated,
		Message: "Scheduling is blocked due to non-empty scheduling gates", LastTransitionTime: at(9*day + 6*hour),
	}}

	// The Pending gang: 8 workers of 8 GPUs plus a CPU launcher, all or nothing,
	// all in one zone.
	gangCreated := 9*day + 8*hour + 12*mins
	gangMsg := "0/2 placements are available, first placement status: pod group is unschedulable"
	unschedulable := []corev1.PodCondition{{
		Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
		Message: gangMsg, LastTransitionTime: at(gangCreated + 3*time.Second),
	}}
	member := func(p *corev1.Pod) {
		p.Spec.SchedulingGroup = &corev1.PodSchedulingGroup{PodGroupName: ptr("llm-pretrain")}
		p.Spec.RestartPolicy = corev1.RestartPolicyNever
		p.Spec.Subdomain = "llm-pretrain"
		p.Spec.Hostname = p.Name
		p.Status.Conditions = unschedulable
	}
	launcher := c.pod("ml-research", "llm-pretrain-launcher", gangCreated, "training-high",
		map[string]string{"app": "llm-pretrain", "role": "launcher"},
		ctr("launcher", "registry.example.com/ml/llm-launcher:0.12.0", rl("cpu", "2", "memory", "4Gi"), rl("cpu", "2", "memory", "4Gi")))
	launcher.Spec.Containers[0].Args = []string{"--workers=8", "--rendezvous=llm-pretrain-worker-0.llm-pretrain:29500"}
	member(launcher)
	for i := range 8 {
		w := c.pod("ml-research", fmt.Sprintf("llm-pretrain-worker-%d", i), gangCreated, "training-high",
			map[string]string{"app": "llm-pretrain", "role": "worker"},
			gpuCtr(pytorchImage, 8, "90", "1000Gi"))
		w.Spec.Containers[0].Command = []string{"torchrun"}
		w.Spec.Containers[0].Args = []string{"--nnodes=8", "--nproc-per-node=8", fmt.Sprintf("--node-rank=%d", i),
			"--rdzv-endpoint=llm-pretrain-worker-0.llm-pretrain:29500", "train.py", "--config=configs/llm-13b.yaml"}
		w.Spec.Tolerations = append(w.Spec.Tolerations, gpuToleration)
		w.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{{Key: gpuProduct, Operator: corev1.NodeSelectorOpIn, Values: []string{a100}}},
			}}},
		}}
		member(w)
	}
	return c
}

func trimWorker(s string) string {
	const w = "-worker"
	if len(s) > len(w) && s[len(s)-len(w):] == w {
		return s[:len(s)-len(w)]
	}
	return s
}

func (c *cluster) podGroup() *schedulingv1beta1.PodGroup {
	created := 9*day + 8*hour + 12*mins
	return &schedulingv1beta1.PodGroup{
		TypeMeta: metav1.TypeMeta{APIVersion: "scheduling.k8s.io/v1beta1", Kind: "PodGroup"},
		ObjectMeta: metav1.ObjectMeta{
			Name: "llm-pretrain", Namespace: "ml-research", Generation: 1, CreationTimestamp: at(created),
			Labels: map[string]string{"app": "llm-pretrain"},
		},
		Spec: schedulingv1beta1.PodGroupSpec{
			SchedulingPolicy: schedulingv1beta1.PodGroupSchedulingPolicy{
				Gang: &schedulingv1beta1.GangSchedulingPolicy{MinCount: 9},
			},
			SchedulingConstraints: &schedulingv1beta1.PodGroupSchedulingConstraints{
				Topology: []schedulingv1beta1.TopologyConstraint{{Key: zoneKey}},
			},
			DisruptionMode:    &schedulingv1beta1.DisruptionMode{Single: &schedulingv1beta1.SingleDisruptionMode{}},
			PriorityClassName: "training-high",
			Priority:          ptr(c.prio["training-high"].Value),
		},
		Status: schedulingv1beta1.PodGroupStatus{Conditions: []metav1.Condition{{
			Type: schedulingv1beta1.PodGroupInitiallyScheduled, Status: metav1.ConditionFalse,
			Reason:  schedulingv1beta1.PodGroupReasonUnschedulable,
			Message: "0/2 placements are available, first placement status: pod group is unschedulable", ObservedGeneration: 1,
			LastTransitionTime: at(created + 3*time.Second),
		}}},
	}
}

// quota is the GPU quota of ml-research, with status.used as the quota
// controller computes it: requests of every non-terminal pod in the namespace,
// Pending ones included (they were charged at admission).
func (c *cluster) quota() *corev1.ResourceQuota {
	hard := rl("pods", "200", "requests.cpu", "1500", "requests.memory", "16Ti", "requests.nvidia.com/gpu", "96")
	used := rl("pods", "0", "requests.cpu", "0", "requests.memory", "0", "requests.nvidia.com/gpu", "0")
	add := func(k corev1.ResourceName, v resource.Quantity) {
		u := used[k]
		u.Add(v)
		used[k] = u
	}
	for _, p := range c.pods {
		if p.Namespace != "ml-research" || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		add("pods", q("1"))
		for _, ct := range p.Spec.Containers {
			for r, v := range ct.Resources.Requests {
				add("requests."+r, v)
			}
		}
	}
	// Re-parse so the quantities print in canonical form.
	for k, v := range used {
		used[k] = q(v.String())
	}
	return &corev1.ResourceQuota{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ResourceQuota"},
		ObjectMeta: metav1.ObjectMeta{Name: "research-compute", Namespace: "ml-research", CreationTimestamp: at(2*hour + 5*mins)},
		Spec:       corev1.ResourceQuotaSpec{Hard: hard},
		Status:     corev1.ResourceQuotaStatus{Hard: hard.DeepCopy(), Used: used},
	}
}

func namespace(name string, created time.Duration) *corev1.Namespace {
	return &corev1.Namespace{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
		ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: at(created),
			Labels: map[string]string{"kubernetes.io/metadata.name": name}},
		Spec:   corev1.NamespaceSpec{Finalizers: []corev1.FinalizerName{corev1.FinalizerKubernetes}},
		Status: corev1.NamespaceStatus{Phase: corev1.NamespaceActive},
	}
}

// ---------------------------------------------------------------- output

// objects returns every object in the order kubectl lists them: by resource
// in the order asked for, then by namespace and name.
func (c *cluster) objects() []runtime.Object {
	var objs []runtime.Object
	for _, ns := range []struct {
		name    string
		created time.Duration
	}{{"default", 0}, {"kube-system", 0}, {"ml-prod", 2 * hour}, {"ml-research", 2 * hour}} {
		objs = append(objs, namespace(ns.name, ns.created))
	}
	pcs := make([]string, 0, len(c.prio))
	for name := range c.prio {
		pcs = append(pcs, name)
	}
	sort.Strings(pcs)
	for _, name := range pcs {
		objs = append(objs, c.prio[name])
	}
	nodes := append([]*nodeInfo(nil), c.nodes...)
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].node.Name < nodes[j].node.Name })
	for _, n := range nodes {
		objs = append(objs, n.node)
	}
	objs = append(objs, c.quota(), c.podGroup())
	pods := append([]*corev1.Pod(nil), c.pods...)
	sort.Slice(pods, func(i, j int) bool {
		if pods[i].Namespace != pods[j].Namespace {
			return pods[i].Namespace < pods[j].Namespace
		}
		return pods[i].Name < pods[j].Name
	})
	for _, p := range pods {
		objs = append(objs, p)
	}
	return objs
}

// render returns the YAML file: a v1 List of every object, with UIDs and
// resource versions filled in, and nulls and empty statuses left out.
func render() ([]byte, error) {
	objs := build().objects()
	items := make([]any, 0, len(objs))
	for i, o := range objs {
		m, ok := o.(metav1.Object)
		if !ok {
			return nil, fmt.Errorf("%T has no metadata", o)
		}
		kind := o.GetObjectKind().GroupVersionKind()
		if kind.Kind == "" {
			return nil, fmt.Errorf("%T %s has no kind", o, m.GetName())
		}
		m.SetUID(types.UID(uuid("uid", kind.Kind, m.GetNamespace(), m.GetName())))
		m.SetResourceVersion(strconv.Itoa(1_204_000 + 37*i + int(hash("rv", m.GetName())[0]%31)))
		raw, err := json.Marshal(o)
		if err != nil {
			return nil, err
		}
		var v map[string]any
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, err
		}
		prune(v)
		if st, ok := v["status"].(map[string]any); ok && len(st) == 0 {
			delete(v, "status")
		}
		items = append(items, v)
	}
	list := map[string]any{
		"apiVersion": "v1",
		"kind":       "List",
		"metadata":   map[string]any{"resourceVersion": ""},
		"items":      items,
	}
	body, err := yaml.Marshal(list)
	if err != nil {
		return nil, err
	}
	header := "# Code generated by go run ./hack/examplegen; DO NOT EDIT.\n" +
		"# A snapshot of a made-up GPU training cluster; see examples/README.md.\n"
	return append([]byte(header), body...), nil
}

// prune removes null values at any depth.
func prune(v any) {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			if e == nil {
				delete(t, k)
				continue
			}
			prune(e)
		}
	case []any:
		for _, e := range t {
			prune(e)
		}
	}
}
