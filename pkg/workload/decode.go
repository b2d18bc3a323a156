package workload

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/kubectl-gang/kubectl-gang/pkg/fields"
	"github.com/kubectl-gang/kubectl-gang/pkg/manifest"
)

// Error reports input that cannot be read as manifests, pointing at
// the file, the document and the list item. Commands map it to exit code 2.
// It is manifest.Error, which --snapshot input reports too.
type Error = manifest.Error

// Decode reads the objects of one -f input: YAML documents separated
// by "---", a stream of JSON objects, a JSON array, and Lists (v1 List or
// typed lists such as PodList) of any of them, flattened in order. Errors name
// source, the document and the item. Empty documents are skipped; input with
// no object at all is an error.
func Decode(data []byte, source string) ([]*unstructured.Unstructured, error) {
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	if len(trimmed) == 0 {
		return nil, &Error{Source: source, Err: errors.New("no objects")}
	}
	docs, err := manifest.Documents(source, data)
	if err != nil {
		return nil, err
	}
	var out []*unstructured.Unstructured
	for _, d := range docs {
		objs, derr := decodeDocument(d.JSON)
		if derr != nil {
			return nil, d.Locate(source, derr)
		}
		out = append(out, objs...)
	}
	if len(out) == 0 {
		return nil, &Error{Source: source, Err: errors.New("no objects")}
	}
	return out, nil
}

// decodeDocument decodes one JSON document: an object, a list, or an array.
// The error it returns lacks Source and Doc, which the caller fills in.
func decodeDocument(raw []byte) ([]*unstructured.Unstructured, *Error) {
	var v any
	// utiljson keeps integers as int64, as the API machinery does.
	if err := utiljson.Unmarshal(raw, &v); err != nil {
		return nil, &Error{Err: fmt.Errorf("invalid JSON: %w", err)}
	}
	if arr, ok := v.([]any); ok {
		return decodeItems(arr, "", "")
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, &Error{Err: fmt.Errorf("not a Kubernetes object: %s", fields.Describe(v))}
	}
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	if apiVersion == "" || kind == "" {
		return nil, &Error{Err: errors.New("not a Kubernetes object: apiVersion and kind are required")}
	}
	if items, isList := obj["items"]; strings.HasSuffix(kind, "List") && (isList || kind == "List") {
		arr, ok := items.([]any)
		if !ok && items != nil {
			return nil, &Error{Err: fmt.Errorf("%s: items must be a list", kind)}
		}
		// A typed list (PodList) may leave its items without apiVersion and kind.
		itemKind := ""
		if kind != "List" {
			itemKind = strings.TrimSuffix(kind, "List")
		}
		return decodeItems(arr, apiVersion, itemKind)
	}
	return []*unstructured.Unstructured{{Object: obj}}, nil
}

func decodeItems(items []any, apiVersion, kind string) ([]*unstructured.Unstructured, *Error) {
	out := make([]*unstructured.Unstructured, 0, len(items))
	for i, item := range items {
		obj, ok := item.(map[string]any)
		if !ok {
			return nil, &Error{Item: i + 1, Err: fmt.Errorf("not a Kubernetes object: %s", fields.Describe(item))}
		}
		u := &unstructured.Unstructured{Object: obj}
		if u.GetKind() == "" && kind != "" {
			u.SetAPIVersion(apiVersion)
			u.SetKind(kind)
		}
		if u.GetAPIVersion() == "" || u.GetKind() == "" {
			return nil, &Error{Item: i + 1, Err: errors.New("not a Kubernetes object: apiVersion and kind are required")}
		}
		out = append(out, u)
	}
	return out, nil
}
