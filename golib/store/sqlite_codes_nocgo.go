//go:build !cgo

package store

// Without cgo the driver is mattn/go-sqlite3's stub, which opens nothing: no SQLite codes to read.
func describeSQLite(error) (string, bool) { return "", false }
func isCorrupt(error) bool                { return false }
