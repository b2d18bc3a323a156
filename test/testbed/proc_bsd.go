//go:build unix && !linux

package testbed

import "syscall"

// sysProcAttr puts a component in its own process group. (No Pdeathsig off
// Linux: a test binary that dies without Stop leaves the components running.)
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
