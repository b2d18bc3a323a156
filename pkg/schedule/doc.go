// Package schedule is the pure core of kubectl-gang: the snapshot model and the
// kube-scheduler-compatible pipeline that runs on it. It takes objects and returns
// decisions; it never talks to an API server, so it must not import client-go.
package schedule
