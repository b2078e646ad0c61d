package store

// SetInsertHook makes every commit call f first, and fail with its error (tests only).
func SetInsertHook(f func() error) { insertHook = f }
