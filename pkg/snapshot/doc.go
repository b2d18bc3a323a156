// Package snapshot builds a schedule.Snapshot from a live cluster or from saved
// objects, and writes one back out as a v1 List that it can read again.
package snapshot
