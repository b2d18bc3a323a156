package testutil

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// recorder is a testing.TB that keeps Golden's failures for the test to
// read instead of failing it.
type recorder struct {
	testing.TB
	name   string
	failed []string
}

func (r *recorder) Helper()      {}
func (r *recorder) Name() string { return r.name }
func (r *recorder) Errorf(format string, args ...any) {
	r.failed = append(r.failed, fmt.Sprintf(format, args...))
}

// Fatalf stops the goroutine as testing.T's does, so that Golden does not
// carry on past it.
func (r *recorder) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	runtime.Goexit()
}

// golden runs Golden as a test named name and returns what it reported.
func golden(name, path string, got []byte) []string {
	r := &recorder{name: name}
	done := make(chan struct{})
	go func() {
		defer close(done)
		Golden(r, path, got)
	}()
	<-done
	return r.failed
}

func TestGolden(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.golden")
	if err := os.WriteFile(path, []byte("header\nline one\nline two\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		path string
		got  string
		want []string // substrings of the one failure; none means it passes
	}{
		{name: "same", path: path, got: "header\nline one\nline two\n"},
		{
			name: "differs", path: path, got: "header\nline one\nline 2\n",
			want: []string{path, "(-want +got)", `"line two"`, `"line 2"`, "go test ./internal/testutil -run '^TestPlace$/^differs$' -update"},
		},
		{
			name: "missing", path: filepath.Join(t.TempDir(), "none.golden"), got: "x",
			want: []string{"none.golden does not exist", "go test ./internal/testutil -run '^TestPlace$/^missing$' -update"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			failed := golden("TestPlace/"+tt.name, tt.path, []byte(tt.got))
			if len(tt.want) == 0 {
				if len(failed) > 0 {
					t.Errorf("Golden failed: %q", failed)
				}
				return
			}
			if len(failed) != 1 {
				t.Fatalf("Golden reported %d failures, want 1: %q", len(failed), failed)
			}
			for _, w := range tt.want {
				if !strings.Contains(failed[0], w) {
					t.Errorf("failure does not say %q:\n%s", w, failed[0])
				}
			}
		})
	}
}

func TestGoldenUpdate(t *testing.T) {
	defer func(was bool) { *update = was }(*update)
	*update = true
	path := filepath.Join(t.TempDir(), "testdata", "new.golden")
	if failed := golden("TestGoldenUpdate", path, []byte("fresh\n")); len(failed) > 0 {
		t.Fatalf("Golden with -update failed: %q", failed)
	}
	b, err := os.ReadFile(path)
	if err != nil || string(b) != "fresh\n" {
		t.Fatalf("golden file after -update: %q, %v; want %q", b, err, "fresh\n")
	}
}
