// Command decodefloor is the floor that loading a JSON snapshot is measured
// against (issue 29): it reads a v1 List, splits its items with
// encoding/json and decodes the Nodes and Pods into typed objects with
// sigs.k8s.io/json (what apimachinery uses) on every core, and nothing else:
// no checks, no normalising, no scheduler.
//
//	go run ./hack/clustergen -nodes 4000 -gpu-nodes 500 -pods 140000 -out /tmp/c4k.json
//	go build -o /tmp/decodefloor ./hack/decodefloor && /tmp/decodefloor /tmp/c4k.json
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"sync"

	corev1 "k8s.io/api/core/v1"
	sigsjson "sigs.k8s.io/json"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: decodefloor FILE")
		os.Exit(2)
	}
	data, err := os.ReadFile(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "decodefloor:", err)
		os.Exit(1)
	}
	var list struct {
		Items []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(data, &list); err != nil {
		fmt.Fprintln(os.Stderr, "decodefloor:", err)
		os.Exit(1)
	}
	data = nil
	workers := runtime.GOMAXPROCS(0)
	objects := make([]any, len(list.Items))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < len(list.Items); i += workers {
				var kind struct {
					Kind string `json:"kind"`
				}
				_ = sigsjson.UnmarshalCaseSensitivePreserveInts(list.Items[i], &kind)
				var obj any
				switch kind.Kind {
				case "Node":
					obj = &corev1.Node{}
				case "Pod":
					obj = &corev1.Pod{}
				default:
					continue
				}
				if err := sigsjson.UnmarshalCaseSensitivePreserveInts(list.Items[i], obj); err != nil {
					fmt.Fprintln(os.Stderr, "decodefloor:", err)
					os.Exit(1)
				}
				objects[i], list.Items[i] = obj, nil
			}
		})
	}
	wg.Wait()
	fmt.Println(len(objects), "objects")
}
