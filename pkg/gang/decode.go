package gang

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/yaml"
)

// ManifestError reports input that cannot be read as manifests, pointing at
// the file, the document and the list item. Commands map it to exit code 2.
type ManifestError struct {
	Source string // file name, or "<stdin>"
	Doc    int    // 1-based document index in a stream; 0 when not known
	// Line is the line the document starts on in a YAML stream, or, when Doc
	// is 0, the line of a syntax error; 0 when not known.
	Line int
	Item int // 1-based index in a List's items; 0 when not in a List
	Err  error
}

func (e *ManifestError) Error() string {
	var b strings.Builder
	b.WriteString(e.Source)
	if e.Doc == 0 && e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	if e.Doc > 0 {
		fmt.Fprintf(&b, ": document %d", e.Doc)
		if e.Line > 0 {
			fmt.Fprintf(&b, " (line %d)", e.Line)
		}
	}
	if e.Item > 0 {
		fmt.Fprintf(&b, ": item %d", e.Item)
	}
	b.WriteString(": ")
	b.WriteString(e.Err.Error())
	return b.String()
}

func (e *ManifestError) Unwrap() error { return e.Err }

// DecodeManifests reads the objects of one -f input: YAML documents separated
// by "---", a stream of JSON objects, a JSON array, and Lists (v1 List or
// typed lists such as PodList) of any of them, flattened in order. Errors name
// source, the document and the item. Empty documents are skipped; input with
// no object at all is an error.
func DecodeManifests(data []byte, source string) ([]*unstructured.Unstructured, error) {
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	if len(trimmed) == 0 {
		return nil, &ManifestError{Source: source, Err: errors.New("no objects")}
	}
	var out []*unstructured.Unstructured
	if trimmed[0] == '{' || trimmed[0] == '[' {
		dec := json.NewDecoder(bytes.NewReader(trimmed))
		for doc := 1; ; doc++ {
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				if err == io.EOF {
					break
				}
				return nil, &ManifestError{Source: source, Doc: doc, Err: fmt.Errorf("invalid JSON: %w", err)}
			}
			objs, err := decodeDocument(raw)
			if err != nil {
				err.Source, err.Doc = source, doc
				return nil, err
			}
			out = append(out, objs...)
		}
	} else {
		for i, d := range splitYAML(data) {
			raw, err := yaml.YAMLToJSON(d.content)
			if err != nil {
				return nil, yamlError(source, i+1, d.line, err)
			}
			if t := bytes.TrimSpace(raw); len(t) == 0 || bytes.Equal(t, []byte("null")) {
				continue
			}
			objs, derr := decodeDocument(raw)
			if derr != nil {
				derr.Source, derr.Doc, derr.Line = source, i+1, d.line
				return nil, derr
			}
			out = append(out, objs...)
		}
	}
	if len(out) == 0 {
		return nil, &ManifestError{Source: source, Err: errors.New("no objects")}
	}
	return out, nil
}

// decodeDocument decodes one JSON document: an object, a list, or an array.
// The error it returns lacks Source and Doc, which the caller fills in.
func decodeDocument(raw []byte) ([]*unstructured.Unstructured, *ManifestError) {
	var v any
	// utiljson keeps integers as int64, as the API machinery does.
	if err := utiljson.Unmarshal(raw, &v); err != nil {
		return nil, &ManifestError{Err: fmt.Errorf("invalid JSON: %w", err)}
	}
	if arr, ok := v.([]any); ok {
		return decodeItems(arr, "", "")
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, &ManifestError{Err: fmt.Errorf("not a Kubernetes object: %s", describeValue(v))}
	}
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	if apiVersion == "" || kind == "" {
		return nil, &ManifestError{Err: errors.New("not a Kubernetes object: apiVersion and kind are required")}
	}
	if items, isList := obj["items"]; strings.HasSuffix(kind, "List") && (isList || kind == "List") {
		arr, ok := items.([]any)
		if !ok && items != nil {
			return nil, &ManifestError{Err: fmt.Errorf("%s: items must be a list", kind)}
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

func decodeItems(items []any, apiVersion, kind string) ([]*unstructured.Unstructured, *ManifestError) {
	out := make([]*unstructured.Unstructured, 0, len(items))
	for i, item := range items {
		obj, ok := item.(map[string]any)
		if !ok {
			return nil, &ManifestError{Item: i + 1, Err: fmt.Errorf("not a Kubernetes object: %s", describeValue(item))}
		}
		u := &unstructured.Unstructured{Object: obj}
		if u.GetKind() == "" && kind != "" {
			u.SetAPIVersion(apiVersion)
			u.SetKind(kind)
		}
		if u.GetAPIVersion() == "" || u.GetKind() == "" {
			return nil, &ManifestError{Item: i + 1, Err: errors.New("not a Kubernetes object: apiVersion and kind are required")}
		}
		out = append(out, u)
	}
	return out, nil
}

// yamlDoc is one document of a YAML stream and the line it starts on.
type yamlDoc struct {
	content []byte
	line    int
}

// splitYAML splits a YAML stream at "---" lines and keeps each document's
// first line, so errors can point into the file.
func splitYAML(data []byte) []yamlDoc {
	var docs []yamlDoc
	start, startLine, line := 0, 1, 1
	for pos := 0; pos < len(data); line++ {
		next := len(data)
		if end := bytes.IndexByte(data[pos:], '\n'); end >= 0 {
			next = pos + end + 1
		}
		l := data[pos:next]
		if bytes.HasPrefix(l, []byte("---")) && len(bytes.TrimRight(l[3:], " \t\r\n")) == 0 {
			docs = append(docs, yamlDoc{content: data[start:pos], line: startLine})
			start, startLine = next, line+1
		}
		pos = next
	}
	return append(docs, yamlDoc{content: data[start:], line: startLine})
}

var yamlErrorLine = regexp.MustCompile(`^yaml: line (\d+): `)

// yamlError points a YAML parser error at its line in the file and drops the
// converter's "error converting YAML to JSON" prefix.
func yamlError(source string, doc, docLine int, err error) error {
	msg := strings.TrimPrefix(err.Error(), "error converting YAML to JSON: ")
	if m := yamlErrorLine.FindStringSubmatch(msg); m != nil {
		n, _ := strconv.Atoi(m[1])
		return &ManifestError{Source: source, Line: docLine + n - 1, Err: fmt.Errorf("invalid YAML: %s", msg[len(m[0]):])}
	}
	return &ManifestError{Source: source, Doc: doc, Line: docLine, Err: fmt.Errorf("invalid YAML: %s", msg)}
}
