package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"sync"
)

// A CPU profile of a run for developers: with TABSCREEN_CPUPROFILE set to a file, the profile
// runs from TsRunStart to the end of TsRunResult (read it with `go tool pprof`). Never on by
// default.
var (
	profileMu   sync.Mutex
	profileFile *os.File
)

func startProfile() {
	path := os.Getenv("TABSCREEN_CPUPROFILE")
	if path == "" {
		return
	}
	profileMu.Lock()
	defer profileMu.Unlock()
	if profileFile != nil {
		return
	}
	f, err := os.Create(path)
	if err != nil {
		return
	}
	if pprof.StartCPUProfile(f) != nil {
		f.Close()
		return
	}
	profileFile = f
}

func stopProfile() {
	profileMu.Lock()
	defer profileMu.Unlock()
	if profileFile == nil {
		return
	}
	pprof.StopCPUProfile()
	profileFile.Close()
	profileFile = nil
}

// memPhase writes the Go heap's size at a phase of a run to standard error, for developers
// (TABSCREEN_MEMSTATS set): where a large screening's memory goes.
func memPhase(phase string) {
	if os.Getenv("TABSCREEN_MEMSTATS") == "" {
		return
	}
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	fmt.Fprintf(os.Stderr, "tabscreen memory %-24s heap in use %6.0f MB, heap objects %9d, Go total %6.0f MB\n",
		phase, float64(m.HeapInuse)/(1<<20), m.HeapObjects, float64(m.Sys-m.HeapReleased)/(1<<20))
}
