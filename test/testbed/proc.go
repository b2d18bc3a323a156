package testbed

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// process is one running component whose output goes to a log file.
type process struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	done    chan struct{}
	err     error // set before done is closed
}

func startProcess(name, bin, logPath string, args ...string) (*process, error) {
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(f, "# %s %s\n", bin, strings.Join(args, " "))
	cmd := exec.Command(bin, args...)
	cmd.Stdout = f
	cmd.Stderr = f
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &process{name: name, cmd: cmd, logPath: logPath, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		f.Close()
		close(p.done)
	}()
	return p, nil
}

func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// exitError describes an exited process, with the end of its log.
func (p *process) exitError() error {
	<-p.done
	log, _ := os.ReadFile(p.logPath)
	return fmt.Errorf("%s exited (%v); last lines of %s:\n%s", p.name, p.err, p.logPath, lastLines(string(log), 20))
}

// stop asks the process group to terminate, and kills it after grace.
func (p *process) stop(grace time.Duration) {
	if p.exited() {
		return
	}
	signalGroup(p.cmd.Process, false)
	select {
	case <-p.done:
	case <-time.After(grace):
		signalGroup(p.cmd.Process, true)
		<-p.done
	}
}
