package snapshot

import (
	"bytes"
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
)

// protobufMagic starts every protobuf response of the API server (an
// envelope, runtime.Unknown, follows).
var protobufMagic = []byte("k8s\x00")

// listPods lists the pods of the cluster as the typed client's List does
// (the same request, the same errors), but decodes each pod of a protobuf
// response with the binary snapshot's decoder (decodePod), so the pods of
// one template share their containers, labels, annotations and owner
// references as a snapshot file's do (docs/design.md#the-snapshot-file):
// a live read keeps about what a file's load keeps (on 40,000 pods, half
// of what the typed client's decoding kept). Each pod is the one the
// generated Unmarshal gives. A response that is not the API
// server's protobuf (a server or proxy that answers JSON) is decoded as
// the typed client decodes it. The returned lister is for one list at a time (the
// pager's pages come one after another): its decoder is not shared.
func listPods(cs kubernetes.Interface) func(context.Context, metav1.ListOptions) (runtime.Object, error) {
	d := newBinaryDecoder()
	return func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
		var timeout time.Duration
		if o.TimeoutSeconds != nil {
			timeout = time.Duration(*o.TimeoutSeconds) * time.Second
		}
		res := cs.CoreV1().RESTClient().Get().Resource("pods").VersionedParams(&o, scheme.ParameterCodec).Timeout(timeout).Do(ctx)
		// Error, not Raw's error: it decodes the server's Status (an
		// expired continue token, which kubelist.List lists again in full;
		// RBAC's message for a refusal).
		if err := res.Error(); err != nil {
			return nil, err
		}
		body, _ := res.Raw()
		list, ok, err := d.decodePodList(body)
		switch {
		case err != nil:
			return nil, err
		case !ok:
			// Not the API server's protobuf PodList (JSON from a proxy):
			// the same answer, decoded as the typed client decodes it.
			list = &corev1.PodList{}
			if err := res.Into(list); err != nil {
				return nil, err
			}
		}
		return list, nil
	}
}

// decodePodList decodes an API server's protobuf PodList response (magic,
// runtime.Unknown envelope, PodList) as the generated code does, each pod
// by decodePod; ok is false for any other response.
func (d *binaryDecoder) decodePodList(body []byte) (*corev1.PodList, bool, error) {
	if !bytes.HasPrefix(body, protobufMagic) {
		return nil, false, nil
	}
	var u runtime.Unknown
	if err := u.Unmarshal(body[len(protobufMagic):]); err != nil {
		return nil, false, fmt.Errorf("decoding the pod list: %w", err)
	}
	if u.APIVersion != "v1" || u.Kind != "PodList" || u.ContentEncoding != "" {
		return nil, false, nil
	}
	// The items are counted first, so each pod is decoded into its place.
	items := 0
	for b := u.Raw; len(b) > 0; {
		num, wire, _, size, ok := protoField(b)
		if !ok || (num == 1 || num == 2) && wire != wireBytes {
			// Not the usual shape: the generated code decodes it, or says
			// what is wrong.
			list := &corev1.PodList{}
			if err := list.Unmarshal(u.Raw); err != nil {
				return nil, false, fmt.Errorf("decoding the pod list: %w", err)
			}
			return list, true, nil
		}
		if num == 2 {
			items++
		}
		b = b[size:]
	}
	list := &corev1.PodList{Items: make([]corev1.Pod, items)}
	items = 0
	for b := u.Raw; len(b) > 0; {
		num, _, value, size, _ := protoField(b)
		b = b[size:]
		switch num {
		case 1:
			if err := list.ListMeta.Unmarshal(value); err != nil {
				return nil, false, fmt.Errorf("decoding the pod list: %w", err)
			}
		case 2:
			if err := d.decodePodInto(&list.Items[items], value); err != nil {
				return nil, false, fmt.Errorf("decoding the pod list: %w", err)
			}
			items++
		}
	}
	return list, true, nil
}
