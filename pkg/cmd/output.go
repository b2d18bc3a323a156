package cmd

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// OutputGroupVersion is the apiVersion of the results kubectl gang prints
// with -o json|yaml, so scripts can tell versions apart.
const OutputGroupVersion = "kubectl-gang.github.io/v1alpha1"

// toObject turns a result struct (with json tags) into an object any
// cli-runtime printer prints: json, yaml, name, jsonpath, go-template.
func toObject(kind, namespace, name string, v any) (runtime.Object, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(v)
	if err != nil {
		return nil, fmt.Errorf("encoding %s: %w", kind, err)
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetAPIVersion(OutputGroupVersion)
	u.SetKind(kind)
	u.SetName(name)
	if namespace != "" {
		u.SetNamespace(namespace)
	}
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	return u, nil
}

// table builds a metav1.Table for the table printer.
func table(columns []string, rows [][]any) *metav1.Table {
	t := &metav1.Table{}
	for _, c := range columns {
		t.ColumnDefinitions = append(t.ColumnDefinitions, metav1.TableColumnDefinition{Name: c, Type: "string"})
	}
	for _, r := range rows {
		t.Rows = append(t.Rows, metav1.TableRow{Cells: r})
	}
	return t
}

func ptrTo[T any](v T) *T { return &v }
