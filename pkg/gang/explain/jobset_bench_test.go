package explain

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/workload"
)

// exclusiveJobSet is a JobSet of 16 child Jobs of 64 workers (4 GPUs each),
// each child Job alone in a block of the clustergen cluster (JobSet's
// exclusive-topology annotation), as `place -f` reads it.
const exclusiveJobSet = `
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: big
  namespace: ml-research
  annotations:
    alpha.jobset.sigs.k8s.io/exclusive-topology: network.topology.kubernetes.io/block
spec:
  replicatedJobs:
  - name: w
    replicas: 16
    template:
      spec:
        parallelism: 64
        template:
          spec:
            nodeSelector: {nvidia.com/gpu.present: "true"}
            tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
            containers:
            - name: c
              image: c
              resources: {limits: {nvidia.com/gpu: "4"}}
`

// BenchmarkPlace1024ExclusiveJobSet places that JobSet (1,024 members) on
// the 5,000-node cluster: JobSet's exclusive placement is pod affinity and
// anti-affinity on the child Job's name, per block.
func BenchmarkPlace1024ExclusiveJobSet(b *testing.B) {
	snap := scaleCluster(b)
	var m map[string]any
	if err := yaml.Unmarshal([]byte(exclusiveJobSet), &m); err != nil {
		b.Fatal(err)
	}
	g, err := workload.FromManifests([]*unstructured.Unstructured{{Object: m}}, "ml-research", 0)
	if err != nil {
		b.Fatal(err)
	}
	// As -f does: JobSet's webhook gives the members the exclusive
	// placement's pod affinity and anti-affinity.
	workload.ApplyWebhooks(g.Members)
	g.SortMembers()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		p, err := gang.Place(context.Background(), snap, g, gang.PlaceOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if p.Verdict != gang.VerdictPlaced {
			b.Fatalf("%s", p.Message)
		}
	}
}
