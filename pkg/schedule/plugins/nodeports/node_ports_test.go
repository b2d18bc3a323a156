package nodeports_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/nodeports"
)

// podWithPorts returns a pod whose container asks for host ports written as
// "PROTOCOL/IP/PORT".
func podWithPorts(ports ...string) *corev1.Pod {
	p := testutil.MakePod().Name("p").Obj()
	p.Spec.Containers[0].Ports = containerPorts(ports...)
	return p
}

func containerPorts(ports ...string) []corev1.ContainerPort {
	var out []corev1.ContainerPort
	for _, s := range ports {
		parts := strings.Split(s, "/")
		port, _ := strconv.Atoi(parts[2])
		out = append(out, corev1.ContainerPort{Protocol: corev1.Protocol(parts[0]), HostIP: parts[1], HostPort: int32(port), ContainerPort: int32(port)})
	}
	return out
}

func nodeRunning(ports ...string) *framework.NodeInfo {
	running := podWithPorts(ports...)
	running.Name = "running"
	running.Spec.NodeName = "n"
	return framework.NewNodeInfo(testutil.MakeNode().Name("n").Obj(), framework.NewPodInfo(running))
}

func podWithInitPorts(sidecar bool, ports ...string) *corev1.Pod {
	p := testutil.MakePod().Name("p").Obj()
	c := corev1.Container{Name: "init", Image: "busybox", Ports: containerPorts(ports...)}
	if sidecar {
		always := corev1.ContainerRestartPolicyAlways
		c.RestartPolicy = &always
	}
	p.Spec.InitContainers = []corev1.Container{c}
	return p
}

// The cases of kube-scheduler's TestNodePorts.
func TestFilter(t *testing.T) {
	rejected := framework.NewStatus(framework.Unschedulable, "node(s) didn't have free ports for the requested pod ports")
	tests := []struct {
		name          string
		pod           *corev1.Pod
		nodeInfo      *framework.NodeInfo
		wantPreFilter *framework.Status
		want          *framework.Status
	}{
		{name: "skip filter", pod: &corev1.Pod{}, nodeInfo: nodeRunning(), wantPreFilter: framework.NewStatus(framework.Skip)},
		{name: "other port", pod: podWithPorts("UDP/127.0.0.1/8080"), nodeInfo: nodeRunning("UDP/127.0.0.1/9090")},
		{name: "same udp port", pod: podWithPorts("UDP/127.0.0.1/8080"), nodeInfo: nodeRunning("UDP/127.0.0.1/8080"), want: rejected},
		{name: "same tcp port", pod: podWithPorts("TCP/127.0.0.1/8080"), nodeInfo: nodeRunning("TCP/127.0.0.1/8080"), want: rejected},
		{name: "different host ip", pod: podWithPorts("TCP/127.0.0.1/8080"), nodeInfo: nodeRunning("TCP/127.0.0.2/8080")},
		{name: "different protocol", pod: podWithPorts("UDP/127.0.0.1/8080"), nodeInfo: nodeRunning("TCP/127.0.0.1/8080")},
		{name: "second udp port conflict", pod: podWithPorts("UDP/127.0.0.1/8000", "UDP/127.0.0.1/8080"), nodeInfo: nodeRunning("UDP/127.0.0.1/8080"), want: rejected},
		{name: "first tcp port conflict", pod: podWithPorts("TCP/127.0.0.1/8001", "UDP/127.0.0.1/8080"), nodeInfo: nodeRunning("TCP/127.0.0.1/8001", "UDP/127.0.0.1/8081"), want: rejected},
		{name: "first tcp port conflict due to 0.0.0.0 hostIP", pod: podWithPorts("TCP/0.0.0.0/8001"), nodeInfo: nodeRunning("TCP/127.0.0.1/8001"), want: rejected},
		{name: "TCP hostPort conflict due to 0.0.0.0 hostIP", pod: podWithPorts("TCP/10.0.10.10/8001", "TCP/0.0.0.0/8001"), nodeInfo: nodeRunning("TCP/127.0.0.1/8001"), want: rejected},
		{name: "second tcp port conflict to 0.0.0.0 hostIP", pod: podWithPorts("TCP/127.0.0.1/8001"), nodeInfo: nodeRunning("TCP/0.0.0.0/8001"), want: rejected},
		{name: "second different protocol", pod: podWithPorts("UDP/127.0.0.1/8001"), nodeInfo: nodeRunning("TCP/0.0.0.0/8001")},
		{name: "UDP hostPort conflict due to 0.0.0.0 hostIP", pod: podWithPorts("UDP/127.0.0.1/8001"), nodeInfo: nodeRunning("TCP/0.0.0.0/8001", "UDP/0.0.0.0/8001"), want: rejected},
		{name: "non-sidecar initContainer using hostPort", pod: podWithInitPorts(false, "TCP//8001"), nodeInfo: nodeRunning("TCP/0.0.0.0/8001"), wantPreFilter: framework.NewStatus(framework.Skip)},
		{name: "TCP hostPort conflict from sidecar initContainer", pod: podWithInitPorts(true, "TCP//8001"), nodeInfo: nodeRunning("TCP/0.0.0.0/8001"), want: rejected},
		// Beyond kube-scheduler's table: defaults for an empty IP and protocol.
		{name: "empty IP and protocol mean 0.0.0.0 and TCP", pod: podWithPorts("//8001"), nodeInfo: nodeRunning("TCP/10.0.0.1/8001"), want: rejected},
		{name: "a container port without a host port asks for nothing", pod: podWithPorts("TCP/0.0.0.0/0"), nodeInfo: nodeRunning("TCP/0.0.0.0/8001"), wantPreFilter: framework.NewStatus(framework.Skip)},
	}
	pl, err := nodeports.New(nil, nil)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	plugin := pl.(*nodeports.NodePorts)
	if plugin.Name() != "NodePorts" || plugin.PreFilterExtensions() != nil {
		t.Errorf("Name() = %q, PreFilterExtensions() = %v", plugin.Name(), plugin.PreFilterExtensions())
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			state := framework.NewCycleState()
			_, status := plugin.PreFilter(ctx, state, tt.pod, nil)
			if diff := cmp.Diff(tt.wantPreFilter, status); diff != "" {
				t.Fatalf("PreFilter (-want +got):\n%s", diff)
			}
			if status.IsSkip() {
				if !nodeports.Fits(tt.pod, tt.nodeInfo) {
					t.Error("Fits() = false for a pod without host ports")
				}
				return
			}
			got := plugin.Filter(ctx, state, tt.pod, tt.nodeInfo)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Filter (-want +got):\n%s", diff)
			}
			if fits := nodeports.Fits(tt.pod, tt.nodeInfo); fits != (tt.want == nil) {
				t.Errorf("Fits() = %v, want %v", fits, tt.want == nil)
			}
		})
	}
}

func TestFilterWithoutPreFilter(t *testing.T) {
	pl := &nodeports.NodePorts{}
	got := pl.Filter(context.Background(), framework.NewCycleState(), podWithPorts("TCP//80"), nodeRunning())
	if got.Code() != framework.Error {
		t.Errorf("Filter without PreFilter = %v, want an Error", got)
	}
}
