// Package store keeps every finished job of a screening in an SQLite file the moment it ends, so
// that a crash, a kill -9 or Ctrl-C loses no paid answer and the same call can resume where the
// interrupted one stopped. The file's schema is documented in ARCHITECTURE.md ("The answer store")
// and in the R help page ?screen_store, for users who open it with DBI.
//
// The driver is the cgo binding mattn/go-sqlite3, which compiles SQLite's C amalgamation into
// our shared library. The pure-Go translation (modernc.org/sqlite) was used first; it made the
// source package 28 MB with its dependencies vendored (SQLite and a C library translated to Go for
// every platform) and the core library twice as large, where the amalgamation is one C file that
// the C compiler cgo already needs builds. RSQLite may have loaded its own SQLite into the same R
// process: the core library exports only its Ts* functions (the linker's export list in src/), so
// the two copies never see each other's symbols.
package store

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	_ "github.com/mattn/go-sqlite3"
)

// schemaVersion is stored in PRAGMA user_version; a file with a higher one was written by a
// newer tabscreen and is not touched, one with a lower one is brought up to date by migrations.
const schemaVersion = 3

// migrations[v] takes a file from schema v to v+1. Version 2: run_time became the whole job's time
// (retries and waits included), so the last attempt's own time moved to took; the arguments of
// custom tools' calls are kept in tool_arguments. Version 3: an answer whose request is the same
// as an earlier answered job's (a record's repetitions) names that job in request_from instead of
// holding a copy of the body.
var migrations = map[int]string{
	1: `ALTER TABLE answers ADD COLUMN took REAL; ALTER TABLE answers ADD COLUMN tool_arguments TEXT;`,
	2: `ALTER TABLE answers ADD COLUMN request_from TEXT;`,
}

const schema = `
CREATE TABLE IF NOT EXISTS runs (
  run_id       TEXT PRIMARY KEY,
  fingerprint  TEXT NOT NULL,
  provider     TEXT NOT NULL,
  endpoint     TEXT NOT NULL,
  models       TEXT NOT NULL,
  prompts      INTEGER NOT NULL,
  records      INTEGER NOT NULL,
  jobs         INTEGER NOT NULL,
  status       TEXT NOT NULL,
  created_at   TEXT NOT NULL,
  updated_at   TEXT NOT NULL,
  owner_pid    INTEGER,
  owner_host   TEXT,
  heartbeat_at REAL,
  settings     TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS runs_by_fingerprint ON runs (fingerprint, created_at);
CREATE TABLE IF NOT EXISTS answers (
  run_id                    TEXT NOT NULL,
  job_key                   TEXT NOT NULL,
  record                    INTEGER NOT NULL,
  studyid                   TEXT,
  promptid                  INTEGER NOT NULL,
  model                     TEXT NOT NULL,
  top_p                     REAL,
  n                         INTEGER NOT NULL,
  answered                  INTEGER NOT NULL,
  decision_llm              TEXT,
  decision_binary           INTEGER,
  detailed_description      TEXT,
  confidence                REAL,
  tool_arguments            TEXT,
  prompt_tokens             INTEGER,
  cached_tokens             INTEGER,
  cache_write_tokens        INTEGER,
  completion_tokens         INTEGER,
  billed_prompt_tokens      INTEGER NOT NULL,
  billed_cached_tokens      INTEGER NOT NULL,
  billed_cache_write_tokens INTEGER NOT NULL,
  billed_completion_tokens  INTEGER NOT NULL,
  price_dollar              REAL,
  submodel                  TEXT,
  http_status               INTEGER,
  attempts                  INTEGER NOT NULL,
  run_time                  REAL,
  took                      REAL,
  received_at               TEXT NOT NULL,
  error                     TEXT,
  request_body              TEXT,
  response_body             TEXT,
  request_from              TEXT,
  PRIMARY KEY (run_id, job_key)
);
CREATE TABLE IF NOT EXISTS attempts (
  run_id        TEXT NOT NULL,
  job_key       TEXT NOT NULL,
  attempt       INTEGER NOT NULL,
  http_status   INTEGER,
  error         TEXT,
  response_body TEXT,
  at            TEXT NOT NULL,
  took          REAL
);
CREATE INDEX IF NOT EXISTS attempts_by_job ON attempts (run_id, job_key);
`

// timeLayout is how times are written: UTC, sortable as text, readable in any SQLite client.
const timeLayout = "2006-01-02T15:04:05.000Z"

// Error is a store failure with the R condition class it becomes.
type Error struct {
	Class   string
	Message string
}

func (e *Error) Error() string { return e.Message }

func storeError(path, what string, err error) *Error {
	msg := fmt.Sprintf("the answer store %s %s", path, what)
	if isCorrupt(err) {
		distrust(path)
	}
	if err != nil {
		msg += ": " + describe(err)
	}
	return &Error{Class: "tabscreen_error_store", Message: msg}
}

// describe turns SQLite's codes into words a user can act on (sqlite_codes.go; a build without
// cgo, such as the darwin cross-compile check, has no SQLite and only the error's own words).
func describe(err error) string {
	if words, ok := describeSQLite(err); ok {
		return words
	}
	return err.Error()
}

// Store is an open answer store file.
type Store struct {
	db   *sql.DB
	Path string
}

// Open opens the store at path, creating the file, its folder and its tables when needed. Every
// way the file can be unusable (folder not writable, not a database, damaged, from a newer
// version) is an error here, before a run sends anything; a damaged file (integrity.go) is found
// before anything is written to it.
func Open(path string) (*Store, error) { return open(path, "NORMAL") }

// OpenDurable opens the store with synchronous = FULL: every commit is on the disk when it
// returns, also across a power cut. The review app writes one decision per commit, a few a
// minute, where the cost of the extra sync is nothing and a lost click is a reviewer's work.
func OpenDurable(path string) (*Store, error) { return open(path, "FULL") }

func open(path, synchronous string) (*Store, error) {
	if strings.TrimSpace(path) == "" {
		return nil, &Error{Class: "tabscreen_error_store", Message: "the answer store path is empty"}
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, storeError(path, "has no usable path", err)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
		return nil, storeError(abs, "cannot be created: its folder cannot be made", err)
	}
	if fi, err := os.Stat(abs); err == nil && fi.IsDir() {
		return nil, storeError(abs, "is a folder, not a file", nil)
	}
	if err := verify(abs); err != nil {
		return nil, err
	}
	// WAL lets a second R session read and append while a run writes; synchronous=NORMAL keeps
	// every commit across a process crash (only an OS crash can lose the last few); the busy
	// timeout makes two sessions wait for each other's short transactions instead of failing.
	q := url.Values{}
	q.Add("_busy_timeout", "15000")
	q.Add("_journal_mode", "WAL")
	q.Add("_synchronous", synchronous)
	q.Add("_txlock", "immediate")
	db, err := sql.Open("sqlite3", fileDSN(abs, q.Encode()))
	if err != nil {
		return nil, storeError(abs, "cannot be opened", err)
	}
	// One connection: the run's writer is its only user, and SQLite serialises writers anyway.
	db.SetMaxOpenConns(1)
	s := &Store{db: db, Path: abs}
	if err := s.init(); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

func (s *Store) init() error {
	ctx := context.Background()
	var version int
	if err := s.db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return storeError(s.Path, "cannot be read", err)
	}
	if version > schemaVersion {
		return storeError(s.Path, fmt.Sprintf("was written by a newer version of tabscreen (schema %d; this one reads %d)", version, schemaVersion), nil)
	}
	var mode string
	if err := s.db.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return storeError(s.Path, "cannot be read", err)
	}
	if !strings.EqualFold(mode, "wal") {
		return storeError(s.Path, "cannot be switched to write-ahead logging (journal_mode is "+mode+"; is the folder on a network drive?)", nil)
	}
	if version == schemaVersion {
		return nil
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return storeError(s.Path, "cannot be written", err)
	}
	defer tx.Rollback()
	ddl := schema
	if version > 0 {
		ddl = ""
		for v := version; v < schemaVersion; v++ {
			ddl += migrations[v]
		}
	}
	if _, err := tx.ExecContext(ctx, ddl); err != nil {
		return storeError(s.Path, "cannot be set up", err)
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", schemaVersion)); err != nil {
		return storeError(s.Path, "cannot be set up", err)
	}
	if err := tx.Commit(); err != nil {
		return storeError(s.Path, "cannot be written", err)
	}
	return nil
}

// Close closes the file. The file as this process leaves it is not checked again by this process
// (integrity.go).
func (s *Store) Close() error {
	err := s.db.Close()
	if err == nil {
		remember(s.Path)
	}
	return err
}

func now() string { return time.Now().UTC().Format(timeLayout) }
