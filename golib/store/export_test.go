package store

import "time"

// SetInsertHook makes every commit call f first, and fail with its error (tests only).
func SetInsertHook(f func() error) { insertHook = f }

// SetCommitEvery changes how long the writer gathers answers for one commit (tests only).
func SetCommitEvery(d time.Duration) (restore func()) {
	old := commitEvery
	commitEvery = d
	return func() { commitEvery = old }
}

// ForgetKept drops the answers kept in memory, as a new R session starts without them (tests only).
func ForgetKept() {
	keptMu.Lock()
	defer keptMu.Unlock()
	clear(keptInMemory)
}
