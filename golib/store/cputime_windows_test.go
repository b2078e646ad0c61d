package store

import "time"

// cpuTime is not measured on Windows; the benchmarks report 0.
func cpuTime() time.Duration { return 0 }
