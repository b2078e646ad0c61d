//go:build unix

package store

import (
	"syscall"
	"time"
)

// cpuTime is the processor time this process has used, user and system: what a benchmark's wall
// time would be on a machine where nothing else runs.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
