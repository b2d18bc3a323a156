package snapshot

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/kubectl-gang/kubectl-gang/internal/clustergen"
)

// benchFile writes the shape, scaled down by ten (400 nodes, 50 of
// them GPU nodes, 14,000 pods: 17 MB of JSON), for the load benchmarks.
func benchFile(b *testing.B) string {
	b.Helper()
	o := clustergen.Default
	o.Nodes, o.GPUNodes, o.Pods = 400, 50, 14000
	var buf bytes.Buffer
	if err := clustergen.WriteList(&buf, clustergen.Cluster(o)); err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(b.TempDir(), "cluster.json")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(buf.Len()))
	return path
}

// BenchmarkLoadJSON loads a JSON snapshot file as --snapshot does.
func BenchmarkLoadJSON(b *testing.B) {
	path := benchFile(b)
	for b.Loop() {
		if _, _, err := LoadFiles(path, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLoadJSONSlowPath loads the same file one document at a time, as
// the fast path's fallback does (and as every JSON file was read before).
func BenchmarkLoadJSONSlowPath(b *testing.B) {
	path := benchFile(b)
	for b.Loop() {
		if _, err := loadFiles(path, nil, false); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLoadBinary loads the same cluster from a binary snapshot file.
func BenchmarkLoadBinary(b *testing.B) {
	snap, _, err := LoadFiles(benchFile(b), nil)
	if err != nil {
		b.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteBinary(&buf, snap); err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(b.TempDir(), "cluster.pb")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(buf.Len()))
	for b.Loop() {
		if _, _, err := LoadFiles(path, nil); err != nil {
			b.Fatal(err)
		}
	}
}
