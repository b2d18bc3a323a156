package snapshot

import (
	"bytes"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	sigsjson "sigs.k8s.io/json"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
)

// Pods of a JSON snapshot share what is equal between them as a binary
// snapshot's do (binary_pod.go, docs/design.md#the-snapshot-file): a pod's
// containers (with its hostNetwork), labels, annotations and owner
// references are looked up by their JSON bytes among the ones this worker
// decoded before. The pod is decoded without them (their values replaced
// by null), and they are decoded alone when they are new, with the same
// strictness; anything unusual (a key given twice or escaped, a part that
// does not decode) is decoded whole, as before, errors included.

// jsonDecoder decodes the objects of a JSON stream on one worker.
type jsonDecoder struct {
	tables sharedTables
	// scratch is the pod's bytes without the shared parts; key the
	// containers' key.
	scratch, key []byte
}

func newJSONDecoder() *jsonDecoder { return &jsonDecoder{tables: newSharedTables()} }

// decode decodes one object of a JSON stream.
func (d *jsonDecoder) decode(it *item) (func(*builder), error) {
	gvk, err := jsonItemKind(it)
	if err != nil {
		return nil, err
	}
	if gvk == podGVK {
		if pod, ok := d.sharedPod(it.raw); ok {
			return keepTyped(pod)
		}
	}
	return decodeObject(gvk, it.raw)
}

// jsonPart is a value of a pod's JSON cut out to be shared.
type jsonPart struct {
	start, end int // in the pod's bytes
}

// sharedPod decodes a pod's JSON with its shared parts, or reports false.
func (d *jsonDecoder) sharedPod(raw []byte) (*corev1.Pod, bool) {
	top, ok := uniqueKeys(raw, 0, "metadata", "spec")
	if !ok {
		return nil, false
	}
	var parts [5]jsonPart // labels, annotations, ownerReferences, containers, hostNetwork
	if m := top[0]; m.end > 0 {
		keys, ok := uniqueKeys(raw[:m.end], m.start, "labels", "annotations", "ownerReferences")
		if !ok {
			return nil, false
		}
		copy(parts[:3], keys)
	}
	if s := top[1]; s.end > 0 {
		keys, ok := uniqueKeys(raw[:s.end], s.start, "containers", "hostNetwork")
		if !ok {
			return nil, false
		}
		copy(parts[3:], keys)
	}
	hostNetwork := false
	if h := parts[4]; h.end > 0 {
		switch string(raw[h.start:h.end]) {
		case "true":
			hostNetwork = true
		case "false", "null":
		default:
			return nil, false
		}
	}
	// The pod without the parts, in the order they are in its bytes.
	scratch := d.scratch[:0]
	from := 0
	for _, p := range sortedParts(parts[:4]) {
		scratch = append(scratch, raw[from:p.start]...)
		scratch = append(scratch, "null"...)
		from = p.end
	}
	scratch = append(scratch, raw[from:]...)
	d.scratch = scratch
	pod := &corev1.Pod{}
	if decodeInto(scratch, podGVK, pod) != nil {
		return nil, false
	}
	value := func(p jsonPart) []byte { return raw[p.start:p.end] }
	if p := parts[0]; p.end > 0 {
		if pod.Labels, ok = sharedJSON(d.tables.labels, value(p), value(p), nil); !ok {
			return nil, false
		}
	}
	if p := parts[1]; p.end > 0 {
		if pod.Annotations, ok = sharedJSON(d.tables.annotations, value(p), value(p), nil); !ok {
			return nil, false
		}
	}
	if p := parts[2]; p.end > 0 {
		refs, ok := sharedJSON(d.tables.ownerRefs, value(p), value(p), nil)
		if !ok {
			return nil, false
		}
		pod.OwnerReferences = slices.Clip(refs)
	}
	if p := parts[3]; p.end > 0 {
		key := append(d.key[:0], 0)
		if hostNetwork {
			key[0] = 1
		}
		key = append(key, value(p)...)
		d.key = key
		if pod.Spec.Containers, ok = sharedJSON(d.tables.containers, key, value(p), func(cs []corev1.Container) []corev1.Container {
			cs = slices.Clip(cs)
			for i := range cs {
				schedule.DefaultContainer(&cs[i], hostNetwork)
			}
			return cs
		}); !ok {
			return nil, false
		}
	}
	return pod, true
}

// sharedJSON returns what the JSON value data decodes to, from table when
// it was decoded before (by key: data, or for containers hostNetwork and
// data); prepare readies a new value before it is shared.
func sharedJSON[T any](table map[string]T, key, data []byte, prepare func(T) T) (T, bool) {
	if v, ok := table[string(key)]; ok {
		return v, true
	}
	var v T
	strictErrs, err := sigsjson.UnmarshalStrict(data, &v, sigsjson.DisallowDuplicateFields)
	if err != nil {
		return v, false
	}
	for _, e := range strictErrs {
		if !strings.Contains(e.Error(), "unknown field") {
			return v, false
		}
	}
	if prepare != nil {
		v = prepare(v)
	}
	if len(table) < maxShared {
		table[string(key)] = v
	}
	return v, true
}

// uniqueKeys finds the values of keys in the JSON object at raw[start:]:
// their positions in raw (zero when absent). It reports false when the
// object is malformed, holds one of keys twice, or a key it cannot be sure
// is none of them (escaped).
func uniqueKeys(raw []byte, start int, keys ...string) ([]jsonPart, bool) {
	found := make([]jsonPart, len(keys))
	obj := raw[start:]
	ok := eachKey(obj, func(key, value []byte) bool {
		if bytes.IndexByte(key, '\\') >= 0 {
			return false
		}
		for i, k := range keys {
			if string(key) == k {
				if found[i].end > 0 {
					return false
				}
				// value is a subslice of obj: its offset is where it starts.
				off := start + cap(obj) - cap(value)
				found[i] = jsonPart{start: off, end: off + len(value)}
			}
		}
		return true
	})
	return found, ok
}

// sortedParts returns the parts present, in the order of their bytes.
func sortedParts(parts []jsonPart) []jsonPart {
	out := make([]jsonPart, 0, len(parts))
	for _, p := range parts {
		if p.end == 0 {
			continue
		}
		i := len(out)
		for i > 0 && out[i-1].start > p.start {
			i--
		}
		out = append(out, jsonPart{})
		copy(out[i+1:], out[i:])
		out[i] = p
	}
	return out
}
