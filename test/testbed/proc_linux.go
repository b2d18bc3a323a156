//go:build linux

package testbed

import "syscall"

// sysProcAttr puts a component in its own process group and has the kernel
// kill it when the test binary dies.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
