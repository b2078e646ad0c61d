package store

import (
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"strings"

	"github.com/tabscreen/tabscreen/golib/arrowio"
)

// The human review of a screening (screen_review() in R) keeps its decisions in tables of their
// own, created on first use beside the screening's tables. They are not part of schemaVersion:
// they change nothing the screening reads, so a file with them stays readable by a tabscreen
// that predates them, and a file without them gains them without a migration.
//
// review_events is the append-only history (every decision, note change and undo is a row);
// review_decisions is its fold, the reviewer's current decision per record and group, which is
// what R reads. Both are written in one transaction per click. A decision carries the id the page
// gave it when it was made (decision_id, unique in a run): a page that sends it again, because it
// never saw the answer or because another tab of the same browser sends it too, adds no row.
const reviewSchema = `
CREATE TABLE IF NOT EXISTS review_events (
  event_id   INTEGER PRIMARY KEY AUTOINCREMENT,
  run_id     TEXT NOT NULL,
  studyid    TEXT NOT NULL,
  grp        TEXT NOT NULL,
  reviewer   TEXT NOT NULL,
  decision   TEXT NOT NULL,
  note       TEXT,
  seconds    REAL,
  queue      TEXT,
  at         TEXT NOT NULL,
  undone     INTEGER NOT NULL DEFAULT 0,
  decision_id TEXT
);
CREATE INDEX IF NOT EXISTS review_events_by_reviewer ON review_events (run_id, reviewer, event_id);
CREATE TABLE IF NOT EXISTS review_decisions (
  run_id     TEXT NOT NULL,
  studyid    TEXT NOT NULL,
  grp        TEXT NOT NULL,
  promptid   INTEGER,
  model      TEXT,
  top_p      REAL,
  reviewer   TEXT NOT NULL,
  decision   TEXT NOT NULL,
  note       TEXT,
  seconds    REAL,
  queue      TEXT,
  audit      INTEGER NOT NULL DEFAULT 0,
  decided_at TEXT NOT NULL,
  event_id   INTEGER NOT NULL,
  PRIMARY KEY (run_id, studyid, grp, reviewer)
);
CREATE TABLE IF NOT EXISTS review_audits (
  run_id     TEXT PRIMARY KEY,
  seed       INTEGER NOT NULL,
  size       INTEGER NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS review_access (
  run_id     TEXT PRIMARY KEY,
  port       INTEGER NOT NULL,
  token      TEXT NOT NULL
);
`

// Decision values, as the page sends them and R reads them.
const (
	Include = "Include"
	Exclude = "Exclude"
	Unsure  = "Unsure"
)

// ValidDecision says whether v is one of the three decisions.
func ValidDecision(v string) bool { return v == Include || v == Exclude || v == Unsure }

// ReviewItem identifies what a decision is about: a record (by study id) under one prompt, model
// and top_p of the screening (grp, R's "promptid/model/top_p" key).
type ReviewItem struct {
	StudyID  string
	Group    string
	PromptID sql.NullInt64
	Model    sql.NullString
	TopP     sql.NullFloat64
	Audit    bool // the item is in the run's audit sample
}

// Decision is a reviewer's current decision on an item. ID is the page's id of the click that
// made it; empty from a page that gives none (each such click is then a new event).
type Decision struct {
	ID        string  `json:"id,omitempty"`
	StudyID   string  `json:"studyid"`
	Group     string  `json:"group"`
	Reviewer  string  `json:"reviewer"`
	Decision  string  `json:"decision"`
	Note      string  `json:"note"`
	Seconds   float64 `json:"seconds"`
	Queue     string  `json:"queue"`
	DecidedAt string  `json:"decided_at"`
}

// decisionIDIndex makes a decision id count once per run. SQLite's unique index lets any number
// of NULLs through: the events of pages that give no id.
const decisionIDIndex = `CREATE UNIQUE INDEX IF NOT EXISTS review_events_by_decision ON review_events (run_id, decision_id)`

// EnsureReview creates the review tables when the file has none, and gives review_events of a
// file made before decision ids their column.
func (s *Store) EnsureReview() error {
	if _, err := s.db.Exec(reviewSchema); err != nil {
		return storeError(s.Path, "cannot be set up for reviewing", err)
	}
	hasID := func() (bool, error) {
		var n int
		err := s.db.QueryRow(`SELECT count(*) FROM pragma_table_info('review_events') WHERE name = 'decision_id'`).Scan(&n)
		return n > 0, err
	}
	has, err := hasID()
	if err != nil {
		return storeError(s.Path, "cannot be read", err)
	}
	if !has {
		if _, err := s.db.Exec(`ALTER TABLE review_events ADD COLUMN decision_id TEXT`); err != nil {
			// Another process (the app, or R beside it) may have added it a moment ago.
			if has, _ = hasID(); !has {
				return storeError(s.Path, "cannot be set up for reviewing", err)
			}
		}
	}
	if _, err := s.db.Exec(decisionIDIndex); err != nil {
		return storeError(s.Path, "cannot be set up for reviewing", err)
	}
	return nil
}

// Decide records a decision (or a new note on it) as an event and as the reviewer's current
// decision, in one transaction: when it returns the click is on disk. It returns the reviewer's
// decision on the item now: the one just made, or, when d.ID is already stored (the page sent the
// click again), whatever that reviewer's decision is after it (nil if it was undone since), and
// nothing is written.
func (s *Store) Decide(runID string, item ReviewItem, d Decision) (*Decision, error) {
	if !ValidDecision(d.Decision) {
		return nil, &Error{Class: "tabscreen_error_review", Message: fmt.Sprintf("%q is not a decision (Include, Exclude or Unsure)", d.Decision)}
	}
	d.StudyID, d.Group, d.DecidedAt = item.StudyID, item.Group, now()
	tx, err := s.db.Begin()
	if err != nil {
		return nil, storeError(s.Path, "cannot be written", err)
	}
	defer tx.Rollback()
	// Written first, so that the transaction takes the write lock before it reads anything.
	res, err := tx.Exec(`INSERT INTO review_events (run_id, studyid, grp, reviewer, decision, note, seconds, queue, at, decision_id)
		VALUES (?,?,?,?,?,?,?,?,?,?) ON CONFLICT (run_id, decision_id) DO NOTHING`,
		runID, d.StudyID, d.Group, d.Reviewer, d.Decision, nullText(d.Note), d.Seconds, nullText(d.Queue), d.DecidedAt, nullText(d.ID))
	if err != nil {
		return nil, storeError(s.Path, "cannot be written", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return nil, storeError(s.Path, "cannot be written", err)
	} else if n == 0 {
		return currentDecision(tx, s.Path, runID, d.StudyID, d.Group, d.Reviewer)
	}
	event, err := res.LastInsertId()
	if err != nil {
		return nil, storeError(s.Path, "cannot be written", err)
	}
	if err := upsertDecision(tx, runID, item, d, event); err != nil {
		return nil, storeError(s.Path, "cannot be written", err)
	}
	if err := tx.Commit(); err != nil {
		return nil, storeError(s.Path, "cannot be written", err)
	}
	return &d, nil
}

// currentDecision is a reviewer's decision on an item, nil when there is none.
func currentDecision(tx *sql.Tx, path, runID, studyid, group, reviewer string) (*Decision, error) {
	d := Decision{StudyID: studyid, Group: group, Reviewer: reviewer}
	var id sql.NullString
	err := tx.QueryRow(`SELECT d.decision, coalesce(d.note, ''), coalesce(d.seconds, 0), coalesce(d.queue, ''), d.decided_at, e.decision_id
		FROM review_decisions d LEFT JOIN review_events e ON e.event_id = d.event_id
		WHERE d.run_id = ? AND d.studyid = ? AND d.grp = ? AND d.reviewer = ?`, runID, studyid, group, reviewer).
		Scan(&d.Decision, &d.Note, &d.Seconds, &d.Queue, &d.DecidedAt, &id)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, storeError(path, "cannot be read", err)
	}
	d.ID = id.String
	return &d, nil
}

func upsertDecision(tx *sql.Tx, runID string, item ReviewItem, d Decision, event int64) error {
	_, err := tx.Exec(`INSERT INTO review_decisions (run_id, studyid, grp, promptid, model, top_p, reviewer, decision, note,
		seconds, queue, audit, decided_at, event_id) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)
		ON CONFLICT (run_id, studyid, grp, reviewer) DO UPDATE SET decision = excluded.decision, note = excluded.note,
		seconds = excluded.seconds, queue = excluded.queue, audit = excluded.audit, decided_at = excluded.decided_at,
		event_id = excluded.event_id`,
		runID, item.StudyID, item.Group, item.PromptID, item.Model, item.TopP, d.Reviewer, d.Decision, nullText(d.Note),
		d.Seconds, nullText(d.Queue), item.Audit, d.DecidedAt, event)
	return err
}

// Undone is what an undo changed: the item, and its decision now (nil: none).
type Undone struct {
	StudyID string    `json:"studyid"`
	Group   string    `json:"group"`
	Now     *Decision `json:"now"`
}

// Undo takes back the reviewer's latest event that is not yet undone, restoring the item to the
// reviewer's decision before it. It returns nil when there is nothing to undo. Undoing again walks
// further back, across restarts of the app, since the history is in the file.
func (s *Store) Undo(runID, reviewer string, items func(studyid, group string) (ReviewItem, bool)) (*Undone, error) {
	tx, err := s.db.Begin()
	if err != nil {
		return nil, storeError(s.Path, "cannot be written", err)
	}
	defer tx.Rollback()
	var event int64
	var studyid, group string
	err = tx.QueryRow(`SELECT event_id, studyid, grp FROM review_events WHERE run_id = ? AND reviewer = ? AND undone = 0
		ORDER BY event_id DESC LIMIT 1`, runID, reviewer).Scan(&event, &studyid, &group)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, storeError(s.Path, "cannot be read", err)
	}
	if _, err := tx.Exec(`UPDATE review_events SET undone = 1 WHERE event_id = ?`, event); err != nil {
		return nil, storeError(s.Path, "cannot be written", err)
	}
	out := &Undone{StudyID: studyid, Group: group}
	var prev Decision
	var note, queue sql.NullString
	var seconds sql.NullFloat64
	var prevEvent int64
	err = tx.QueryRow(`SELECT event_id, decision, note, seconds, queue, at FROM review_events
		WHERE run_id = ? AND reviewer = ? AND studyid = ? AND grp = ? AND undone = 0 ORDER BY event_id DESC LIMIT 1`,
		runID, reviewer, studyid, group).Scan(&prevEvent, &prev.Decision, &note, &seconds, &queue, &prev.DecidedAt)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		if _, err := tx.Exec(`DELETE FROM review_decisions WHERE run_id = ? AND studyid = ? AND grp = ? AND reviewer = ?`,
			runID, studyid, group, reviewer); err != nil {
			return nil, storeError(s.Path, "cannot be written", err)
		}
	case err != nil:
		return nil, storeError(s.Path, "cannot be read", err)
	default:
		prev.StudyID, prev.Group, prev.Reviewer = studyid, group, reviewer
		prev.Note, prev.Seconds, prev.Queue = note.String, seconds.Float64, queue.String
		item, ok := items(studyid, group)
		if !ok {
			item = ReviewItem{StudyID: studyid, Group: group}
		}
		if err := upsertDecision(tx, runID, item, prev, prevEvent); err != nil {
			return nil, storeError(s.Path, "cannot be written", err)
		}
		out.Now = &prev
	}
	if err := tx.Commit(); err != nil {
		return nil, storeError(s.Path, "cannot be written", err)
	}
	return out, nil
}

// ReviewDecisions returns every reviewer's current decisions of a run, for the page.
func (s *Store) ReviewDecisions(runID string) ([]Decision, error) {
	rows, err := s.db.Query(`SELECT studyid, grp, reviewer, decision, coalesce(note, ''), coalesce(seconds, 0),
		coalesce(queue, ''), decided_at FROM review_decisions WHERE run_id = ? ORDER BY event_id`, runID)
	if err != nil {
		return nil, storeError(s.Path, "cannot be read", err)
	}
	defer rows.Close()
	out := []Decision{}
	for rows.Next() {
		var d Decision
		if err := rows.Scan(&d.StudyID, &d.Group, &d.Reviewer, &d.Decision, &d.Note, &d.Seconds, &d.Queue, &d.DecidedAt); err != nil {
			return nil, storeError(s.Path, "cannot be read", err)
		}
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, storeError(s.Path, "cannot be read", err)
	}
	return out, nil
}

var decisionColumns = []column{
	str("run_id", "d.run_id"), str("studyid", "d.studyid"), i32("promptid", "d.promptid"), str("model", "d.model"),
	f64("top_p", "d.top_p"), str("reviewer", "d.reviewer"), str("decision", "d.decision"), str("note", "d.note"),
	str("decided_at", "d.decided_at"), f64("seconds", "d.seconds"), str("queue", "d.queue"), lgl("audit", "d.audit"),
	str("group", "d.grp"),
}

// DecisionsTable returns a run's current decisions as the table screen_review_decisions() gives,
// in the order they were made. A store without review tables has none.
func (s *Store) DecisionsTable(runID string) (*arrowio.Table, error) {
	if err := s.EnsureReview(); err != nil {
		return nil, err
	}
	where, args := "d.run_id = ?", []any{runID}
	return s.table(decisionColumns, "review_decisions d", where, "d.event_id", args)
}

// AuditSpec is the audit sample of a run: R draws `Size` of the model's Excludes with `Seed`.
type AuditSpec struct {
	Seed int64 `json:"seed"`
	Size int   `json:"size"`
}

// Audit fixes a run's audit sample. The first call stores the seed (seed 0: a random one) and
// size; later calls must give the same seed (or 0) and may enlarge the sample, whose first
// records stay the same because R draws a permutation and takes its head. A different seed, or a
// smaller sample, would make the records already audited no longer a simple random sample.
func (s *Store) Audit(runID string, seed int64, size int) (AuditSpec, error) {
	if err := s.EnsureReview(); err != nil {
		return AuditSpec{}, err
	}
	tx, err := s.db.Begin()
	if err != nil {
		return AuditSpec{}, storeError(s.Path, "cannot be written", err)
	}
	defer tx.Rollback()
	var spec AuditSpec
	err = tx.QueryRow(`SELECT seed, size FROM review_audits WHERE run_id = ?`, runID).Scan(&spec.Seed, &spec.Size)
	stamp := now()
	switch {
	case errors.Is(err, sql.ErrNoRows):
		if seed == 0 {
			if seed, err = randomSeed(); err != nil {
				return AuditSpec{}, err
			}
		}
		spec = AuditSpec{Seed: seed, Size: size}
		_, err = tx.Exec(`INSERT INTO review_audits (run_id, seed, size, created_at, updated_at) VALUES (?,?,?,?,?)`,
			runID, seed, size, stamp, stamp)
	case err != nil:
		return AuditSpec{}, storeError(s.Path, "cannot be read", err)
	default:
		if seed != 0 && seed != spec.Seed {
			return AuditSpec{}, &Error{Class: "tabscreen_error_review_audit", Message: fmt.Sprintf(
				"the audit sample of run %s was drawn with seed %d; give seed = %d (a larger sample keeps the records already drawn)",
				runID, spec.Seed, spec.Seed)}
		}
		if size < spec.Size {
			return AuditSpec{}, &Error{Class: "tabscreen_error_review_audit", Message: fmt.Sprintf(
				"the audit sample of run %s already holds %d records; give audit = %d or more", runID, spec.Size, spec.Size)}
		}
		if size > spec.Size {
			spec.Size = size
			_, err = tx.Exec(`UPDATE review_audits SET size = ?, updated_at = ? WHERE run_id = ?`, size, stamp, runID)
		}
	}
	if err != nil {
		return AuditSpec{}, storeError(s.Path, "cannot be written", err)
	}
	if err := tx.Commit(); err != nil {
		return AuditSpec{}, storeError(s.Path, "cannot be written", err)
	}
	return spec, nil
}

// StoredAudit returns a run's audit sample, or ok = false when it has none.
func (s *Store) StoredAudit(runID string) (spec AuditSpec, ok bool, err error) {
	if err := s.EnsureReview(); err != nil {
		return AuditSpec{}, false, err
	}
	err = s.db.QueryRow(`SELECT seed, size FROM review_audits WHERE run_id = ?`, runID).Scan(&spec.Seed, &spec.Size)
	if errors.Is(err, sql.ErrNoRows) {
		return AuditSpec{}, false, nil
	}
	if err != nil {
		return AuditSpec{}, false, storeError(s.Path, "cannot be read", err)
	}
	return spec, true, nil
}

// Access returns the port and token of a run's review page, making them on first use. Keeping
// them lets a browser tab left open reconnect to the app started again after R was killed; the
// token keeps other local users and web pages from the API. A new run's port is 0 until the
// first server records the one it got (SetAccessPort).
func (s *Store) Access(runID string) (port int, token string, err error) {
	err = s.db.QueryRow(`SELECT port, token FROM review_access WHERE run_id = ?`, runID).Scan(&port, &token)
	if err == nil {
		return port, token, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return 0, "", storeError(s.Path, "cannot be read", err)
	}
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return 0, "", fmt.Errorf("no random token: %w", err)
	}
	token = hex.EncodeToString(b)
	if _, err := s.db.Exec(`INSERT INTO review_access (run_id, port, token) VALUES (?, 0, ?) ON CONFLICT (run_id) DO NOTHING`, runID, token); err != nil {
		return 0, "", storeError(s.Path, "cannot be written", err)
	}
	// Another process may have won the insert: take what is stored.
	if err := s.db.QueryRow(`SELECT port, token FROM review_access WHERE run_id = ?`, runID).Scan(&port, &token); err != nil {
		return 0, "", storeError(s.Path, "cannot be read", err)
	}
	return port, token, nil
}

// SetAccessPort records the port a run's page was first served on.
func (s *Store) SetAccessPort(runID string, port int) error {
	if _, err := s.db.Exec(`UPDATE review_access SET port = ? WHERE run_id = ? AND port = 0`, port, runID); err != nil {
		return storeError(s.Path, "cannot be written", err)
	}
	return nil
}

func randomSeed() (int64, error) {
	n, err := rand.Int(rand.Reader, big.NewInt(1<<31-2))
	if err != nil {
		return 0, fmt.Errorf("no random seed: %w", err)
	}
	return n.Int64() + 1, nil
}

func nullText(s string) sql.NullString {
	return sql.NullString{String: s, Valid: strings.TrimSpace(s) != ""}
}
