package manifest

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestDocuments reads the streams kubectl reads: YAML documents, a JSON
// stream, and JSON documents between "---" lines without a leading one
// (issue #42: they failed as invalid JSON); broken JSON is still an error
// that names the document.
func TestDocuments(t *testing.T) {
	const a, b = `{"kind": "Pod", "metadata": {"name": "a"}}`, `{"kind": "Pod", "metadata": {"name": "b"}}`
	for _, tt := range []struct {
		name, data string
		want       []string // the names read, in order
		wantErr    string
	}{
		{"YAML", "kind: Pod\nmetadata: {name: a}\n---\nkind: Pod\nmetadata: {name: b}\n", []string{"a", "b"}, ""},
		{"a JSON stream", a + "\n" + b + "\n", []string{"a", "b"}, ""},
		{"JSON documents between separators", a + "\n---\n" + b + "\n", []string{"a", "b"}, ""},
		{"the same after a leading separator", "---\n" + a + "\n---\n" + b + "\n", []string{"a", "b"}, ""},
		{"broken JSON", a + "\n{\"kind\": \n", nil, "document 2: invalid JSON"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			docs, err := Documents("f.yaml", []byte(tt.data))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, d := range docs {
				var obj struct {
					Metadata struct{ Name string } `json:"metadata"`
				}
				if err := json.Unmarshal(d.JSON, &obj); err != nil {
					t.Fatal(err)
				}
				got = append(got, obj.Metadata.Name)
			}
			if strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Errorf("read %v, want %v", got, tt.want)
			}
		})
	}
}
