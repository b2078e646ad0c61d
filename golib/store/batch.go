package store

import (
	"context"
	"fmt"
	"time"

	"github.com/tabscreen/tabscreen/golib/arrowio"
)

// batchSchema holds the batches of batch screenings (created on first use, like the review tables,
// not part of schemaVersion): one row per batch a run meant to submit, written before the submit
// call (state "intent"), so that a crash between the provider's answer and our record of it never
// loses a paid batch: its tag finds it again.
const batchSchema = `
CREATE TABLE IF NOT EXISTS batches (
  batch_id    INTEGER PRIMARY KEY AUTOINCREMENT,
  run_id      TEXT NOT NULL,
  tag         TEXT NOT NULL UNIQUE,
  provider_id TEXT,
  state       TEXT NOT NULL,
  collected   INTEGER NOT NULL DEFAULT 0,
  lines       INTEGER NOT NULL,
  done        INTEGER NOT NULL DEFAULT 0,
  failed      INTEGER NOT NULL DEFAULT 0,
  created_at  TEXT NOT NULL,
  updated_at  TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS batches_by_run ON batches (run_id);
CREATE TABLE IF NOT EXISTS batch_jobs (
  batch_id  INTEGER NOT NULL,
  custom_id TEXT NOT NULL,
  job_key   TEXT NOT NULL,
  PRIMARY KEY (batch_id, custom_id)
);
`

// Batch states of our own; the others are the provider's words for its batch.
const (
	BatchIntent = "intent" // recorded, the submit call not known to have succeeded
	BatchVoid   = "void"   // an intent the provider never received: its jobs are sent again
)

// Batch is one batch of a run.
type Batch struct {
	ID         int64
	Tag        string
	ProviderID string
	State      string
	Lines      int
	Created    time.Time
	// Jobs maps each line's custom id to its job key.
	Jobs map[string]string
}

// RunBatches are the batches of one run.
type RunBatches struct {
	store *Store
	RunID string
}

// Batches are the batches of the session's run.
func (s *Session) Batches() *RunBatches { return &RunBatches{s.store, s.RunID} }

// RunBatches are the batches of a run, e.g. to cancel them from another session.
func (s *Store) RunBatches(runID string) *RunBatches { return &RunBatches{s, runID} }

// EnsureBatches creates the batch tables when the file has none.
func (s *Store) EnsureBatches() error {
	if _, err := s.db.Exec(batchSchema); err != nil {
		return storeError(s.Path, "cannot be set up for batches", err)
	}
	return nil
}

// hasBatches reports whether the file has the batch tables.
func (s *Store) hasBatches() bool {
	var n int
	err := s.db.QueryRow(`SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'batches'`).Scan(&n)
	return err == nil && n > 0
}

// BatchIntent records a batch before it is submitted, with the jobs of its lines.
func (s *RunBatches) BatchIntent(tag string, customIDs, keys []string) (int64, error) {
	ctx := context.Background()
	tx, err := s.store.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, storeError(s.store.Path, "cannot be written", err)
	}
	defer tx.Rollback()
	t := now()
	res, err := tx.ExecContext(ctx, `INSERT INTO batches (run_id, tag, state, lines, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)`,
		s.RunID, tag, BatchIntent, len(keys), t, t)
	if err != nil {
		return 0, storeError(s.store.Path, "cannot be written", err)
	}
	id, _ := res.LastInsertId()
	stmt, err := tx.PrepareContext(ctx, `INSERT INTO batch_jobs (batch_id, custom_id, job_key) VALUES (?, ?, ?)`)
	if err != nil {
		return 0, storeError(s.store.Path, "cannot be written", err)
	}
	defer stmt.Close()
	for i, k := range keys {
		if _, err := stmt.ExecContext(ctx, id, customIDs[i], k); err != nil {
			return 0, storeError(s.store.Path, "cannot be written", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return 0, storeError(s.store.Path, "cannot be written", err)
	}
	return id, nil
}

// BatchUpdate records a batch's provider id (once known), state and line counts.
func (s *RunBatches) BatchUpdate(id int64, providerID, state string, done, failed int) error {
	_, err := s.store.db.Exec(`UPDATE batches SET provider_id = COALESCE(NULLIF(?, ''), provider_id), state = ?,
		done = ?, failed = ?, updated_at = ? WHERE batch_id = ?`, providerID, state, done, failed, now(), id)
	if err != nil {
		return storeError(s.store.Path, "cannot be written", err)
	}
	return nil
}

// BatchCollected marks a batch whose every line has been reconciled.
func (s *RunBatches) BatchCollected(id int64) error {
	_, err := s.store.db.Exec(`UPDATE batches SET collected = 1, updated_at = ? WHERE batch_id = ?`, now(), id)
	if err != nil {
		return storeError(s.store.Path, "cannot be written", err)
	}
	return nil
}

// OpenBatches are the run's batches not yet collected (intents included), with their jobs.
func (s *RunBatches) OpenBatches() ([]Batch, error) {
	rows, err := s.store.db.Query(`SELECT batch_id, tag, COALESCE(provider_id, ''), state, lines, created_at FROM batches
		WHERE run_id = ? AND collected = 0 AND state != ? ORDER BY batch_id`, s.RunID, BatchVoid)
	if err != nil {
		return nil, storeError(s.store.Path, "cannot be read", err)
	}
	var out []Batch
	for rows.Next() {
		var b Batch
		var created string
		if err := rows.Scan(&b.ID, &b.Tag, &b.ProviderID, &b.State, &b.Lines, &created); err != nil {
			rows.Close()
			return nil, storeError(s.store.Path, "cannot be read", err)
		}
		b.Created, _ = time.Parse(timeLayout, created)
		out = append(out, b)
	}
	rows.Close()
	for i := range out {
		if out[i].Jobs, err = s.batchJobs(out[i].ID); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (s *RunBatches) batchJobs(id int64) (map[string]string, error) {
	rows, err := s.store.db.Query(`SELECT custom_id, job_key FROM batch_jobs WHERE batch_id = ?`, id)
	if err != nil {
		return nil, storeError(s.store.Path, "cannot be read", err)
	}
	defer rows.Close()
	jobs := map[string]string{}
	for rows.Next() {
		var c, k string
		if err := rows.Scan(&c, &k); err != nil {
			return nil, storeError(s.store.Path, "cannot be read", err)
		}
		jobs[c] = k
	}
	return jobs, rows.Err()
}

// KnownBatchIDs are the provider ids of every batch the store holds (of any run).
func (s *RunBatches) KnownBatchIDs() (map[string]bool, error) {
	rows, err := s.store.db.Query(`SELECT provider_id FROM batches WHERE provider_id IS NOT NULL`)
	if err != nil {
		return nil, storeError(s.store.Path, "cannot be read", err)
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, storeError(s.store.Path, "cannot be read", err)
		}
		out[id] = true
	}
	return out, rows.Err()
}

// BatchTries counts, per job key, the collected batches of the run that held the job (an open one
// counts once it is collected).
func (s *RunBatches) BatchTries() (map[string]int, error) {
	rows, err := s.store.db.Query(`SELECT j.job_key, COUNT(*) FROM batch_jobs j JOIN batches b USING (batch_id)
		WHERE b.run_id = ? AND b.collected = 1 AND b.state != ? GROUP BY j.job_key`, s.RunID, BatchVoid)
	if err != nil {
		return nil, storeError(s.store.Path, "cannot be read", err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var k string
		var n int
		if err := rows.Scan(&k, &n); err != nil {
			return nil, storeError(s.store.Path, "cannot be read", err)
		}
		out[k] = n
	}
	return out, rows.Err()
}

// batchColumns are the columns of screen_store(batches = TRUE).
var batchColumns = []column{
	str("run_id", "run_id"), i32("batch", "batch_id"), str("provider_id", "provider_id"), str("tag", "tag"),
	str("state", "state"), lgl("collected", "collected"), i32("lines", "lines"), i32("done", "done"),
	i32("failed", "failed"), str("created_at", "created_at"), str("updated_at", "updated_at"),
}

// Batches lists the batches of a run ("" for every run).
func (s *Store) Batches(runID string) (*arrowio.Table, error) {
	if err := s.EnsureBatches(); err != nil {
		return nil, err
	}
	where, args := "", []any(nil)
	if runID != "" {
		where, args = "run_id = ?", []any{runID}
	}
	return s.table(batchColumns, "batches", where, "batch_id", args)
}

// RunEndpoint is the provider and endpoint a run was screened with.
func (s *Store) RunEndpoint(runID string) (provider, endpoint string, err error) {
	err = s.db.QueryRow(`SELECT provider, endpoint FROM runs WHERE run_id = ?`, runID).Scan(&provider, &endpoint)
	if err != nil {
		return "", "", &Error{Class: "tabscreen_error_store_run", Message: fmt.Sprintf("run %s is not in the answer store %s", runID, s.Path)}
	}
	return provider, endpoint, nil
}
