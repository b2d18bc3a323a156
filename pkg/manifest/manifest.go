// Package manifest splits YAML and JSON input into documents, the part that
// reading a snapshot (--snapshot) and reading what-if manifests (-f) share,
// and reports bad input pointing at its file, document, line and item. It is
// pure: no client, no API types.
package manifest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"
)

// Error reports input that cannot be read, pointing at it. Commands map it to
// exit code 2.
type Error struct {
	Source string // file name, or "<stdin>"
	Doc    int    // 1-based document index in a stream; 0 when not known
	// Line is the line the document starts on in a YAML stream, or, when Doc
	// is 0, the line of a syntax error; 0 when not known.
	Line int
	Item int // 1-based index in a List's items; 0 when not in a List
	Err  error
}

func (e *Error) Error() string {
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

func (e *Error) Unwrap() error { return e.Err }

// Document is one document of the input, as JSON, with where it came from.
type Document struct {
	JSON []byte
	Doc  int // 1-based index in the stream
	Line int // first line in a YAML stream; 0 for JSON
}

// Locate fills in where a decoding error happened.
func (d Document) Locate(source string, e *Error) *Error {
	e.Source, e.Doc, e.Line = source, d.Doc, d.Line
	return e
}

// Documents splits data into its documents: a stream of JSON values when it
// starts with '{' or '[', else YAML documents separated by "---" lines, each
// converted to JSON. Empty YAML documents are left out. A syntax error is an
// *Error pointing at the file and line.
func Documents(source string, data []byte) ([]Document, error) {
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	if len(trimmed) > 0 && (trimmed[0] == '{' || trimmed[0] == '[') {
		docs, err := jsonDocuments(source, trimmed)
		if err == nil || !hasSeparator(data) {
			return docs, err
		}
		// JSON documents between "---" lines are a YAML stream (YAML
		// reads JSON), as kubectl reads them.
	}
	var docs []Document
	for i, d := range splitYAML(data) {
		raw, err := yaml.YAMLToJSON(d.content)
		if err != nil {
			return nil, yamlSyntaxError(source, i+1, d.line, err)
		}
		if t := bytes.TrimSpace(raw); len(t) == 0 || bytes.Equal(t, []byte("null")) {
			continue
		}
		docs = append(docs, Document{JSON: raw, Doc: i + 1, Line: d.line})
	}
	return docs, nil
}

// jsonDocuments reads a stream of JSON documents.
func jsonDocuments(source string, data []byte) ([]Document, error) {
	var docs []Document
	dec := json.NewDecoder(bytes.NewReader(data))
	for doc := 1; ; doc++ {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			if err == io.EOF {
				return docs, nil
			}
			return nil, &Error{Source: source, Doc: doc, Err: fmt.Errorf("invalid JSON: %w", err)}
		}
		docs = append(docs, Document{JSON: raw, Doc: doc})
	}
}

// hasSeparator reports whether a stream has a YAML document separator line.
func hasSeparator(data []byte) bool { return len(splitYAML(data)) > 1 }

// yamlDocument is one document of a YAML stream and the line it starts on.
type yamlDocument struct {
	content []byte
	line    int
}

// splitYAML splits a YAML stream at "---" lines, as the API machinery's
// YAMLReader does, but keeps each document's first line so errors can point
// into the file.
func splitYAML(data []byte) []yamlDocument {
	var docs []yamlDocument
	start, startLine, line := 0, 1, 1
	for pos := 0; pos < len(data); line++ {
		next := len(data)
		if end := bytes.IndexByte(data[pos:], '\n'); end >= 0 {
			next = pos + end + 1
		}
		l := data[pos:next]
		if bytes.HasPrefix(l, []byte("---")) && len(bytes.TrimRight(l[3:], " \t\r\n")) == 0 {
			docs = append(docs, yamlDocument{content: data[start:pos], line: startLine})
			start, startLine = next, line+1
		}
		pos = next
	}
	return append(docs, yamlDocument{content: data[start:], line: startLine})
}

// yamlLine finds the line number in a YAML parser message.
var yamlLine = regexp.MustCompile(`^yaml: line (\d+): `)

// yamlSyntaxError points a YAML parser error at its line in the file rather
// than in the document, and drops the converter's "error converting YAML to
// JSON:" prefix, which says nothing to a user who gave us YAML.
func yamlSyntaxError(source string, doc, docLine int, err error) error {
	msg := strings.TrimPrefix(err.Error(), "error converting YAML to JSON: ")
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		n, _ := strconv.Atoi(m[1])
		return &Error{Source: source, Line: docLine + n - 1, Err: fmt.Errorf("invalid YAML: %s", msg[len(m[0]):])}
	}
	return &Error{Source: source, Doc: doc, Line: docLine, Err: fmt.Errorf("invalid YAML: %s", msg)}
}
