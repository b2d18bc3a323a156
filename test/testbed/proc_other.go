//go:build !unix

package testbed

import (
	"errors"
	"os"
	"syscall"
)

func sysProcAttr() *syscall.SysProcAttr { return nil }

func signalGroup(p *os.Process, kill bool) { _ = p.Kill() }

func lockBuild() (func(), error) {
	return nil, errors.New("testbed: only supported on unix; set " + BinDirEnv)
}

func processGone(pid int) bool { return false }
