//go:build cgo

package store

import (
	"errors"

	"github.com/mattn/go-sqlite3"
)

func describeSQLite(err error) (string, bool) {
	var se sqlite3.Error
	if !errors.As(err, &se) {
		return "", false
	}
	switch se.Code {
	case sqlite3.ErrNotADB:
		return "the file is not an SQLite database (is it another program's file?)", true
	case sqlite3.ErrCorrupt:
		return "the file is damaged (delete it, or point options(tabscreen.store = ...) at a new file)", true
	case sqlite3.ErrFull:
		return "the disk is full", true
	case sqlite3.ErrReadonly, sqlite3.ErrCantOpen, sqlite3.ErrPerm:
		return "the file cannot be written (check the folder's permissions)", true
	case sqlite3.ErrBusy, sqlite3.ErrLocked:
		return "another process held the file locked for too long", true
	case sqlite3.ErrIoErr:
		return "the file could not be read or written (" + err.Error() + ")", true
	}
	return "", false
}

// isCorrupt reports whether err is SQLite's word that the file is damaged.
func isCorrupt(err error) bool {
	var se sqlite3.Error
	return errors.As(err, &se) && se.Code == sqlite3.ErrCorrupt
}
