//go:build !unix

package fakeprovider

import "time"

func selfCPU() (time.Duration, bool) { return 0, false }

func processCPU(string) (time.Duration, bool) { return 0, false }
