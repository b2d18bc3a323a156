// Command clustergen writes a large, deterministic cluster snapshot (a JSON
// v1 List) and, with -job, a Job to submit to it: the inputs of the scale
// figures in the README.
//
//	go run ./hack/clustergen -out /tmp/cluster.json
//	go run ./hack/clustergen -nodes 15000 -gpu-nodes 12000 -pods 150000 -out /tmp/c15k.json
//	go run ./hack/clustergen -nodes 5000 -gpu-nodes 5000 -pending-gangs 200 -out /tmp/queue.json
//	go run ./hack/clustergen -job train -parallelism 1000 -gpus 2 -indexed -out /tmp/job.json
//	go run ./hack/clustergen -nodes 5000 -gpu-nodes 5000 -kueue-queues 50 -kueue-workloads 5000 -out /tmp/kueue.json
//	go run ./hack/clustergen -gpu-nodes 5000 -kueue-queues 50 -kueue-workloads 5000 -kueue-pending 500 -out /tmp/kueue500.json
//	go run ./hack/clustergen -job train -parallelism 16 -gpus 8 -queue lq-007 -out /tmp/kjob.json
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"github.com/kubectl-gang/kubectl-gang/internal/clustergen"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "clustergen:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	o := clustergen.Default
	fs := flag.NewFlagSet("clustergen", flag.ContinueOnError)
	fs.IntVar(&o.Nodes, "nodes", o.Nodes, "nodes")
	fs.IntVar(&o.GPUNodes, "gpu-nodes", o.GPUNodes, "how many of the nodes have 8 GPUs")
	fs.IntVar(&o.Zones, "zones", o.Zones, "zones")
	fs.IntVar(&o.BlockSize, "block-size", o.BlockSize, "nodes per network block")
	fs.IntVar(&o.Pods, "pods", o.Pods, "running pods")
	fs.IntVar(&o.GPUsUsed, "gpus-used", o.GPUsUsed, "GPUs the first pod of each GPU node holds")
	pending := fs.Int("pending-gangs", 0, "pending gangs and pods of no gang of mixed shapes and priorities to add (the queue's benchmark)")
	queues := fs.Int("kueue-queues", 0, "Kueue ClusterQueues (and a LocalQueue each, lq-NNN in ml-research) to add")
	pendingNative := fs.Int("pending-native", 0, "pending native PodGroups of issue #39's queue shape: 2-16 members of 1-8 GPUs, pod priorities 0, 100, 1000, none on the groups, created over a day")
	kueuePending := fs.Int("kueue-pending", 0, "pending Workloads Kueue holds with no pods (suspended Jobs), spread over the ClusterQueues; each queue's GPU quota is then what its admitted Workloads use plus 16")
	workloads := fs.Int("kueue-workloads", 0, "admitted Kueue Workloads to add, spread over the ClusterQueues")
	out := fs.String("out", "-", "file to write, - for standard output")
	job := clustergen.JobOptions{Namespace: "ml-research"}
	fs.StringVar(&job.Name, "job", "", "write a Job of this name instead of a cluster")
	fs.StringVar(&job.Namespace, "namespace", job.Namespace, "the Job's namespace")
	parallelism := fs.Int("parallelism", 1000, "the Job's parallelism and completions")
	fs.IntVar(&job.GPUs, "gpus", 2, "GPUs per pod of the Job")
	fs.BoolVar(&job.Indexed, "indexed", false, "completionMode Indexed")
	fs.BoolVar(&job.ZoneSpread, "zone-spread", false, "spread the Job's pods over zones (DoNotSchedule)")
	fs.StringVar(&job.Queue, "queue", "", "label the Job for this Kueue LocalQueue")
	if err := fs.Parse(args); err != nil {
		return err
	}
	w := os.Stdout
	if *out != "-" {
		f, err := os.Create(*out)
		if err != nil {
			return err
		}
		defer f.Close()
		w = f
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	if job.Name != "" {
		job.Parallelism = int32(*parallelism)
		if err := json.NewEncoder(bw).Encode(clustergen.Job(job)); err != nil {
			return err
		}
	} else if err := clustergen.WriteList(bw, append(clustergen.Cluster(o), append(append(clustergen.PendingGangs(o, *pending), clustergen.PendingNative(o, *pendingNative)...), clustergen.KueueQueue(o, *queues, *workloads, *kueuePending)...)...)); err != nil {
		return err
	}
	return bw.Flush()
}
