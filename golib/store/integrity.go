package store

import (
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// A store damaged inside (pages overwritten, a disk error) reads normally until a statement meets a
// damaged page, which can be in the middle of a run, after requests were paid for, and SQLite may
// write into the damaged tree before it notices. So a file is checked (PRAGMA quick_check: every
// page of every table and index, without comparing the indexes' content to the tables') through a
// read-only connection before the first read-write connection is opened. Nothing is written to
// a file that fails it.
//
// The check reads the whole file (0.8 s for a million answers, 1.8 GB), so it is done once per file
// and process. A
// file checked, or last closed by this process, with the same size, modification time and
// identity is not checked again; a change from outside (another program, another session's run)
// makes the next open check it again.

// checked holds, per absolute path, the file as it was when it was last checked or last closed
// by this process; suspect, the files in which SQLite found damage since their last check.
var (
	checkedMu sync.Mutex
	checked   = map[string]os.FileInfo{}
	suspect   = map[string]bool{}
)

// sameFile reports whether a and b are one file with the same size and modification time.
func sameFile(a, b os.FileInfo) bool {
	return a != nil && b != nil && os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}

// DamagedClass is the error class of a store whose file is damaged.
const DamagedClass = "tabscreen_error_store_damaged"

// damagedError names the file, what the check found, and what the user can do.
func damagedError(path, found string) *Error {
	return &Error{Class: DamagedClass, Message: fmt.Sprintf("the answer store %s is damaged (%s); nothing was sent and "+
		"the file was not written. Copy what can still be read into a new file with screen_store_recover(%q, to), "+
		"or move the file aside to start a new store", path, found, path)}
}

// verify checks the store file at abs unless this process already knows it to be sound. A file
// that does not exist or is empty has nothing to check.
func verify(abs string) error {
	before, err := os.Stat(abs)
	if err != nil || before.Size() == 0 {
		return nil
	}
	checkedMu.Lock()
	known := !suspect[abs] && sameFile(checked[abs], before)
	checkedMu.Unlock()
	if known {
		return nil
	}
	if err := quickCheck(abs); err != nil {
		return err
	}
	checkedMu.Lock()
	delete(suspect, abs)
	checkedMu.Unlock()
	remember(abs)
	return nil
}

// remember records the file at abs as sound in its present state, unless damage was met in it.
func remember(abs string) {
	fi, err := os.Stat(abs)
	checkedMu.Lock()
	defer checkedMu.Unlock()
	if err == nil && !suspect[abs] {
		checked[abs] = fi
	}
}

// distrust makes the next open of the file at abs check it again: SQLite met damage in it.
func distrust(abs string) {
	checkedMu.Lock()
	defer checkedMu.Unlock()
	suspect[abs] = true
	delete(checked, abs)
}

// fileDSN names the file at abs as an SQLite URI with the given query. A plain path would be cut
// at its first '?' by the driver, so a store named "run?1.sqlite" would open "run"; in a URI the
// path's '?', '#' and '%' are escaped and the file opened is the one named.
func fileDSN(abs, query string) string {
	p := filepath.ToSlash(abs)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p // a Windows drive: file:/C:/...
	}
	return "file:" + (&url.URL{Path: p}).EscapedPath() + "?" + query
}

// readOnlyDSN opens the file at abs for reading only: SQLite never writes a database opened so
// (its write-ahead log is read, and only its shared-memory index may be made).
func readOnlyDSN(abs string) string {
	return fileDSN(abs, "mode=ro&_busy_timeout=15000")
}

func openReadOnly(abs string) (*sql.DB, error) {
	db, err := sql.Open("sqlite3", readOnlyDSN(abs))
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	return db, nil
}

// quickCheck runs PRAGMA quick_check on the file at abs, read only.
func quickCheck(abs string) error {
	db, err := openReadOnly(abs)
	if err != nil {
		return storeError(abs, "cannot be opened", err)
	}
	defer db.Close()
	// Reading through a memory map saves a system call per page, a good part of the check's CPU
	// on a large store (bench/README.md). SQLite maps at most 2 GB and reads the rest. A file cut
	// short by another program during the check would fault the mapping; nothing of tabscreen's
	// shortens a store (it never vacuums).
	if _, err := db.Exec("PRAGMA mmap_size = 4000000000"); err != nil {
		return checkFailed(abs, err)
	}
	rows, err := db.Query("PRAGMA quick_check(1)")
	if err != nil {
		return checkFailed(abs, err)
	}
	defer rows.Close()
	var found []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return checkFailed(abs, err)
		}
		// "*** in database main ***" heads the first line: the file is the store's only database.
		line = strings.TrimSpace(strings.TrimPrefix(line, "*** in database main ***"))
		found = append(found, strings.Join(strings.Fields(line), " "))
	}
	if err := rows.Err(); err != nil {
		return checkFailed(abs, err)
	}
	if len(found) == 1 && found[0] == "ok" {
		return nil
	}
	return damagedError(abs, "PRAGMA quick_check: "+strings.Join(found, "; "))
}

// checkFailed words an error of the check itself: a file too damaged to be checked is damaged;
// one that is not a database, or cannot be read, says so.
func checkFailed(abs string, err error) error {
	if isCorrupt(err) {
		return damagedError(abs, "SQLite: "+err.Error())
	}
	return storeError(abs, "cannot be read", err)
}
