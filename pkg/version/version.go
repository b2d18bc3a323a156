// Package version tells which build of kubectl-gang is running.
package version

import (
	"runtime"
	"runtime/debug"
)

// Version is the release version, set at link time by hack/release.sh
// (-X github.com/kubectl-gang/kubectl-gang/pkg/version.Version=v0.1.0). A
// `go install` build falls back to the module version Go records.
var Version = ""

// Info describes a build.
type Info struct {
	Version   string `json:"version"`
	GitCommit string `json:"gitCommit,omitempty"`
	GoVersion string `json:"goVersion"`
	Platform  string `json:"platform"`
}

// Get returns the running build's Info.
func Get() Info {
	info := Info{Version: Version, GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if info.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			info.Version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				info.GitCommit = s.Value
			}
		}
	}
	if info.Version == "" {
		info.Version = "devel"
	}
	return info
}
