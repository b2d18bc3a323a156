// Package volcano models the decisions Volcano's scheduler (volcano-sh/volcano,
// pkg/scheduler) takes for a gang in one session, as its configuration
// (volcano-scheduler.conf) sets them up: which actions and plugins run, the
// enqueue step (overcommit, proportion, capacity), each queue's deserved
// share and the per-task allocatable check of the allocate action, and the
// gang plugin's validity and readiness per task. It is pure: objects in,
// decisions out (docs/design.md#volcano).
//
// Volcano is not served by the module proxy, so nothing here imports it;
// each function names the Volcano function it follows, and the tests derive
// their expected answers from that code by hand.
package volcano
