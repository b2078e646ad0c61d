package main

import (
	"os"
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
