package store

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/tabscreen/tabscreen/golib/guard"
	"github.com/tabscreen/tabscreen/golib/screen"
)

// Run statuses. Only "completed" runs (every job answered) are left alone by a new call with the
// same fingerprint; the others are resumed: "incomplete" is a run that ended with failed requests
// (a lost network fails every request still to send).
const (
	StatusRunning     = "running"
	StatusInterrupted = "interrupted"
	StatusStopped     = "stopped"
	StatusIncomplete  = "incomplete"
	StatusCompleted   = "completed"
)

// heartbeatEvery is how often a live run says so; a run on another machine is considered
// abandoned after staleAfter without a heartbeat (on this machine, the owner's pid decides).
const (
	heartbeatEvery = 2 * time.Second
	staleAfter     = 30 * time.Second
)

// RunSpec describes the run a screening call wants to write into.
type RunSpec struct {
	Fingerprint string
	Provider    string
	Endpoint    string
	Models      []string
	Prompts     int
	Records     int
	Jobs        int
	Settings    []byte // JSON, without the key
	RunID       string // continue this run (screen_errors()), whatever its status
	Reuse       bool   // also continue a completed run with the same fingerprint
}

// Answer is one finished job as stored: an answer, or a failure after at least one attempt.
type Answer struct {
	Key        string
	Record     int32 // 1-based position in the run's records
	StudyID    string
	PromptID   int32
	Model      string
	TopP       float64
	HasTopP    bool
	N          int32
	Answered   bool
	Decision   screen.Decision
	Usage      screen.Usage // of the answer
	Billed     screen.Usage // of every billed reply of the job
	Price      float64
	HasPrice   bool
	Submodel   string
	HTTPStatus int
	Attempts   int32
	RunTime    float64 // of the job: from its first attempt to its answer
	Took       float64 // of the last attempt alone
	ReceivedAt time.Time
	Error      string
	Request    []byte
	Response   []byte
	Log        []Attempt
	// Index is the job's position in its run's call, handed back when the answer is committed.
	Index int
}

// Attempt is one failed attempt of a job, for the audit log.
type Attempt struct {
	N          int
	HTTPStatus int
	Error      string
	Response   []byte
	At         time.Time
	Took       float64
}

// JobKey is the stable name of a job within a run.
func JobKey(record, promptID int32, model string, topP float64, hasTopP bool, n int32) string {
	// Appended rather than formatted with fmt ("%d/%d/%s/%g/%d", "-" without top_p): the key is
	// made for every job, twice. strconv's shortest 'g' is what %g writes (session_test.go).
	b := make([]byte, 0, len(model)+32)
	b = strconv.AppendInt(b, int64(record), 10)
	b = append(b, '/')
	b = strconv.AppendInt(b, int64(promptID), 10)
	b = append(b, '/')
	b = append(b, model...)
	b = append(b, '/')
	if hasTopP {
		b = strconv.AppendFloat(b, topP, 'g', -1, 64)
	} else {
		b = append(b, '-')
	}
	b = append(b, '/')
	b = strconv.AppendInt(b, int64(n), 10)
	return string(b)
}

// Session is a run claimed in a store: what it already holds, and the writer that commits every
// new answer as it arrives.
type Session struct {
	store   *Store
	RunID   string
	Resumed bool
	// Reused is true when the run continued had completed: a call with reuse takes its answers.
	Reused bool
	// Previous is a completed run with the same fingerprint that this new run does not reuse.
	Previous string
	// Written is how many answers kept from earlier calls (WriteKept) the claim wrote first.
	Written int
	stored  map[string]Answer // answered jobs
	billed  map[string]screen.Usage
	// answered counts the run's answered rows in the file: those loaded, and those committed since.
	answered int
	// settled: jobs adaptive repetitions left unsent (Settled)
	settled                  int
	settledWhole, settledSet bool

	queue       chan Answer
	written     chan struct{}
	errMu       sync.Mutex
	err         error
	onFail      func(error)
	onCommitted func(indices []int)
	closed      bool
	// kept holds what the store did not take once a write failed.
	kept keeper
	// The writer's prepared statements (its goroutine only).
	ins, log *sql.Stmt
	// requests finds the answered job that already holds a request's body (the writer's only).
	requests sharedRequests
}

// sharedRequests remembers which answered job of the run holds each request body written lately,
// so that the same request (a record's repetitions send one body each time) is stored
// once and the others name that job in request_from. At a million jobs the copies were most of
// what the store wrote, and their writes cost more as R's session grew (bench/README.md). Only an
// answered job holds a body for others: its row is never overwritten. Remembering is bounded;
// a body forgotten is stored again, which costs room and nothing else.
type sharedRequests struct {
	holders map[[sha256.Size]byte]string
}

const maxSharedRequests = 1 << 16

// share is the body to store for a's request and the job that holds it instead ("" when a holds
// its own), with the body's hash for held. A job never points at itself.
func (r *sharedRequests) share(a *Answer) (body []byte, from string, hash [sha256.Size]byte) {
	if r == nil || a.Request == nil {
		return nil, "", hash
	}
	hash = sha256.Sum256(a.Request)
	if holder, ok := r.holders[hash]; ok && holder != a.Key {
		return nil, holder, hash
	}
	return a.Request, "", hash
}

// held records that a's row now holds the body of the given hash, once the row is written: a late
// copy of a job answered already changes nothing, and its row may hold no body at all.
func (r *sharedRequests) held(a *Answer, body []byte, hash [sha256.Size]byte) {
	if r == nil || body == nil || !a.Answered {
		return
	}
	if r.holders == nil || len(r.holders) >= maxSharedRequests {
		r.holders = make(map[[sha256.Size]byte]string)
	}
	r.holders[hash] = a.Key
}

// forget drops what a failed transaction may have recorded: its rows are not in the file.
func (r *sharedRequests) forget() { r.holders = nil }

// active holds the runs this process is writing, so that a "running" row owned by this process
// but not in the set (left by an earlier call that could not record its end) is taken over.
var (
	activeMu sync.Mutex
	active   = map[string]bool{}
)

// Claim finds the run a call continues (an unfinished run with the same fingerprint, or the
// named run) or creates a new one, and makes this process its owner. A run that another live
// process is writing is refused: the same jobs are never sent twice.
func (s *Store) Claim(spec RunSpec) (*Session, error) {
	// Answers an earlier call received but could not write go in first: the run then counts them
	// as stored and sends none of those jobs again.
	written, err := s.WriteKept()
	if err != nil {
		return nil, err
	}
	ctx := context.Background()
	tx, err := s.db.BeginTx(ctx, nil) // BEGIN IMMEDIATE (_txlock): claims are serialised
	if err != nil {
		return nil, storeError(s.Path, "cannot be written", err)
	}
	defer tx.Rollback()
	var row *sql.Row
	if spec.RunID != "" {
		row = tx.QueryRowContext(ctx, `SELECT `+runRowColumns+` FROM runs WHERE run_id = ?`, spec.RunID)
	} else {
		row = tx.QueryRowContext(ctx, `SELECT `+runRowColumns+` FROM runs
			WHERE fingerprint = ? ORDER BY created_at DESC, rowid DESC LIMIT 1`, spec.Fingerprint)
	}
	found, err := scanRunRow(row)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, storeError(s.Path, "cannot be read", err)
	}
	exists := err == nil
	host, pid := hostname(), myPid()
	stamp := now()
	session := &Session{store: s, Written: written}
	resume := exists && (spec.RunID != "" || spec.Reuse || found.status != StatusCompleted)
	if resume {
		if found.busy() {
			return nil, &Error{Class: "tabscreen_error_store_busy", Message: busyMessage(found)}
		}
		_, err = tx.ExecContext(ctx, `UPDATE runs SET status = ?, owner_pid = ?, owner_host = ?, heartbeat_at = ?, updated_at = ? WHERE run_id = ?`,
			StatusRunning, pid, host, unixNow(), stamp, found.id)
		session.RunID, session.Resumed, session.Reused = found.id, true, found.status == StatusCompleted
	} else {
		if exists {
			session.Previous = found.id
		}
		session.RunID = spec.RunID
		if session.RunID == "" {
			session.RunID = newRunID()
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO runs (run_id, fingerprint, provider, endpoint, models, prompts, records, jobs,
			status, created_at, updated_at, owner_pid, owner_host, heartbeat_at, settings) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
			session.RunID, spec.Fingerprint, spec.Provider, spec.Endpoint, strings.Join(spec.Models, ", "), spec.Prompts,
			spec.Records, spec.Jobs, StatusRunning, stamp, stamp, pid, host, unixNow(), string(spec.Settings))
	}
	if err != nil {
		return nil, storeError(s.Path, "cannot be written", err)
	}
	if err := tx.Commit(); err != nil {
		return nil, storeError(s.Path, "cannot be written", err)
	}
	activeMu.Lock()
	active[session.RunID] = true
	activeMu.Unlock()
	if session.Resumed {
		if err := session.load(); err != nil {
			session.release(StatusInterrupted)
			return nil, err
		}
	}
	return session, nil
}

// runRow is what a claim or a deletion needs to know of a run: its status and its owner.
type runRow struct {
	id, status string
	pid        sql.NullInt64
	host       sql.NullString
	heartbeat  sql.NullFloat64
}

const runRowColumns = "run_id, status, owner_pid, owner_host, heartbeat_at"

func scanRunRow(row *sql.Row) (runRow, error) {
	var r runRow
	err := row.Scan(&r.id, &r.status, &r.pid, &r.host, &r.heartbeat)
	return r, err
}

// busy reports whether another live process (or a live run of this one) is writing the run.
func (r runRow) busy() bool {
	if r.status != StatusRunning || !r.pid.Valid {
		return false
	}
	switch host := hostname(); {
	case r.host.String == host && int(r.pid.Int64) == myPid():
		activeMu.Lock()
		defer activeMu.Unlock()
		return active[r.id]
	case r.host.String == host:
		return processAlive(int(r.pid.Int64))
	}
	return r.heartbeat.Valid && unixNow()-r.heartbeat.Float64 < staleAfter.Seconds()
}

func busyMessage(r runRow) string {
	ago := ""
	if r.heartbeat.Valid {
		ago = fmt.Sprintf(", last active %.0f s ago", max(0, unixNow()-r.heartbeat.Float64))
	}
	return fmt.Sprintf("run %s of the answer store, the same screening, is being run by another R session (process %d on %s%s). "+
		"Wait for it to finish, then call again to get its answers (options(tabscreen.store_reuse = TRUE)), or stop that session first: "+
		"a second copy would send the same requests twice", r.id, r.pid.Int64, r.host.String, ago)
}

func newRunID() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return time.Now().UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b)
}

func hostname() string {
	h, _ := os.Hostname()
	return h
}

func myPid() int { return os.Getpid() }

func unixNow() float64 { return float64(time.Now().UnixNano()) / 1e9 }

// load reads what the run already holds: every answered job, and the billed tokens of jobs that
// failed (they were paid for, and count in the price when the job is sent again).
func (s *Session) load() error {
	rows, err := s.store.db.Query(`SELECT job_key, answered, decision_llm, decision_binary, detailed_description, confidence, tool_arguments,
		prompt_tokens, cached_tokens, cache_write_tokens, completion_tokens,
		billed_prompt_tokens, billed_cached_tokens, billed_cache_write_tokens, billed_completion_tokens,
		submodel, attempts, run_time, received_at FROM answers WHERE run_id = ?`, s.RunID)
	if err != nil {
		return storeError(s.store.Path, "cannot be read", err)
	}
	defer rows.Close()
	s.stored = map[string]Answer{}
	s.billed = map[string]screen.Usage{}
	for rows.Next() {
		var a Answer
		var decision, description, arguments, submodel sql.NullString
		var binary, pt, ct, cwt, cpt sql.NullInt64
		var confidence, runTime sql.NullFloat64
		var received string
		if err := rows.Scan(&a.Key, &a.Answered, &decision, &binary, &description, &confidence, &arguments, &pt, &ct, &cwt, &cpt,
			&a.Billed.Prompt, &a.Billed.Cached, &a.Billed.CacheWrite, &a.Billed.Completion,
			&submodel, &a.Attempts, &runTime, &received); err != nil {
			return storeError(s.store.Path, "holds a row that cannot be read", err)
		}
		if !a.Answered {
			s.billed[a.Key] = a.Billed
			continue
		}
		a.Decision = screen.Decision{Raw: decision.String, Binary: int32(binary.Int64), Description: description.String,
			HasDescription: description.Valid, Confidence: confidence.Float64, HasConfidence: confidence.Valid,
			Arguments: arguments.String}
		a.Usage = screen.Usage{Prompt: pt.Int64, Cached: ct.Int64, CacheWrite: cwt.Int64, Completion: cpt.Int64}
		a.Submodel, a.RunTime = submodel.String, runTime.Float64
		a.ReceivedAt, _ = time.Parse(timeLayout, received)
		s.stored[a.Key] = a
	}
	s.answered = len(s.stored)
	if err := rows.Err(); err != nil {
		return storeError(s.store.Path, "cannot be read", err)
	}
	return nil
}

// DropStored forgets the answers loaded from the store: the run has taken what it needs of them.
func (s *Session) DropStored() { s.stored = nil }

// Stored returns the stored answer of a job, if it has one.
func (s *Session) Stored(key string) (Answer, bool) {
	a, ok := s.stored[key]
	return a, ok
}

// StoredFailedUsage returns the tokens billed for earlier failed attempts of a job.
func (s *Session) StoredFailedUsage(key string) screen.Usage { return s.billed[key] }

// Start begins committing saved answers; onFail is called once if a write fails, after which
// nothing more is written to the file: what is saved from then on (and the batch that failed)
// is kept (kept.go) for the next call on the store to write in. onCommitted, when
// set, is told the Index of every answer of each batch once that batch is committed: the run
// need not keep those answers in memory any longer.
func (s *Session) Start(onFail func(error), onCommitted func(indices []int)) {
	s.onFail = onFail
	s.onCommitted = onCommitted
	s.kept = keeper{path: s.store.Path, runID: s.RunID}
	s.queue = make(chan Answer, 4096)
	s.written = make(chan struct{})
	go s.write()
}

// Save queues a finished job; it is committed within milliseconds. Once the writer has ended
// (after a panic) the job is kept instead of queued, so that no job waits on a full queue.
func (s *Session) Save(a Answer) {
	select {
	case s.queue <- a:
	case <-s.written:
		s.kept.keep([]Answer{a})
	}
}

// Kept is how many answered jobs the store did not take and were kept instead, and where:
// "journal" (beside the store, and in memory) or "memory" (this process alone).
func (s *Session) Kept() (answers int, where string) {
	keptMu.Lock()
	defer keptMu.Unlock()
	return s.kept.answers, s.kept.where()
}

// Err is the write failure, if any.
func (s *Session) Err() error {
	s.errMu.Lock()
	defer s.errMu.Unlock()
	return s.err
}

func (s *Session) write() {
	defer close(s.written)
	defer guard.Recover(s.abort)
	defer s.closeStatements()
	tick := time.NewTicker(heartbeatEvery)
	defer tick.Stop()
	const maxBatch = 1024
	batch := make([]Answer, 0, maxBatch)
	for {
		select {
		case a, ok := <-s.queue:
			if !ok {
				return
			}
			// Group commit: what arrives within commitEvery of the first answer goes into one
			// transaction. A transaction costs far more than a row; one per answer or two capped a
			// zero-latency run at a few thousand answers a second.
			batch = append(batch[:0], a)
			open := s.gather(&batch, maxBatch)
			s.commit(batch)
			clear(batch)
			if !open {
				return
			}
		case <-tick.C:
			if s.Err() == nil {
				_, err := s.store.db.Exec(`UPDATE runs SET heartbeat_at = ?, updated_at = ? WHERE run_id = ?`, unixNow(), now(), s.RunID)
				s.fail(err)
			}
		}
	}
}

// commit writes a batch, or keeps it when the store failed (now or before).
func (s *Session) commit(batch []Answer) {
	committed := false
	// Deferred, so that a panic of the writer keeps the batch too.
	defer func() {
		if !committed {
			s.kept.keep(batch)
		}
	}()
	if s.Err() != nil {
		return
	}
	err := s.insert(batch)
	s.fail(err)
	if committed = err == nil; committed && s.onCommitted != nil {
		indices := make([]int, len(batch))
		for i := range batch {
			indices[i] = batch[i].Index
		}
		s.onCommitted(indices)
	}
}

// commitEvery bounds how long an answer waits in memory before its commit.
var commitEvery = 20 * time.Millisecond

// gather adds to batch what the queue holds within commitEvery, up to max answers; false when the
// queue was closed (the run is ending: commit and stop).
func (s *Session) gather(batch *[]Answer, max int) bool {
	deadline := time.NewTimer(commitEvery)
	defer deadline.Stop()
	for len(*batch) < max {
		select {
		case b, ok := <-s.queue:
			if !ok {
				return false
			}
			*batch = append(*batch, b)
		case <-deadline.C:
			return true
		}
	}
	return true
}

// statements prepares the writer's statements once per session: preparing them in every
// transaction cost as much as the inserts.
func (s *Session) statements() (ins, log *sql.Stmt, err error) {
	if s.ins == nil {
		if s.ins, err = s.store.db.Prepare(insertAnswer); err != nil {
			return nil, nil, err
		}
	}
	if s.log == nil {
		if s.log, err = s.store.db.Prepare(insertAttempt); err != nil {
			return nil, nil, err
		}
	}
	return s.ins, s.log, nil
}

func (s *Session) closeStatements() {
	for _, st := range []*sql.Stmt{s.ins, s.log} {
		if st != nil {
			st.Close()
		}
	}
	s.ins, s.log = nil, nil
}

func (s *Session) fail(err error) {
	if err == nil {
		return
	}
	s.abort(storeError(s.store.Path, "could not record an answer, so no further request was sent", err))
}

// abort records the first failure of the writer (a failed commit, or a panic) and tells the run.
func (s *Session) abort(err error) {
	s.errMu.Lock()
	first := s.err == nil
	if first {
		s.err = err
	}
	s.errMu.Unlock()
	if first && s.onFail != nil {
		s.onFail(err)
	}
}

const insertAnswer = `INSERT INTO answers (run_id, job_key, record, studyid, promptid, model, top_p, n, answered,
	decision_llm, decision_binary, detailed_description, confidence, tool_arguments,
	prompt_tokens, cached_tokens, cache_write_tokens, completion_tokens,
	billed_prompt_tokens, billed_cached_tokens, billed_cache_write_tokens, billed_completion_tokens,
	price_dollar, submodel, http_status, attempts, run_time, took, received_at, error, request_body, response_body, request_from)
	VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)
	ON CONFLICT (run_id, job_key) DO UPDATE SET
	answered = excluded.answered, decision_llm = excluded.decision_llm, decision_binary = excluded.decision_binary,
	detailed_description = excluded.detailed_description, confidence = excluded.confidence,
	tool_arguments = excluded.tool_arguments,
	prompt_tokens = excluded.prompt_tokens, cached_tokens = excluded.cached_tokens,
	cache_write_tokens = excluded.cache_write_tokens, completion_tokens = excluded.completion_tokens,
	billed_prompt_tokens = excluded.billed_prompt_tokens, billed_cached_tokens = excluded.billed_cached_tokens,
	billed_cache_write_tokens = excluded.billed_cache_write_tokens, billed_completion_tokens = excluded.billed_completion_tokens,
	price_dollar = excluded.price_dollar, submodel = excluded.submodel, http_status = excluded.http_status,
	attempts = answers.attempts + excluded.attempts, run_time = excluded.run_time, took = excluded.took, received_at = excluded.received_at,
	error = excluded.error, request_body = excluded.request_body, response_body = excluded.response_body,
	request_from = excluded.request_from
	WHERE answers.answered = 0`

const insertAttempt = `INSERT INTO attempts (run_id, job_key, attempt, http_status, error, response_body, at, took) VALUES (?,?,?,?,?,?,?,?)`

// insertHook lets the tests make a commit fail as a full disk would (export_test.go).
var insertHook func() error

// insert commits a batch in one transaction. An answered job is never overwritten (the WHERE of
// the upsert): a paid answer, once stored, stays.
func (s *Session) insert(batch []Answer) (err error) {
	// A transaction that fails leaves no row behind to hold a body for later answers.
	defer func() {
		if err != nil {
			s.requests.forget()
		}
	}()
	if insertHook != nil {
		if err := insertHook(); err != nil {
			return err
		}
	}
	insDB, logDB, err := s.statements()
	if err != nil {
		return err
	}
	tx, err := s.store.db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	w := rowWriter{ins: tx.Stmt(insDB), log: tx.Stmt(logDB), requests: &s.requests}
	for i := range batch {
		if err := w.write(s.RunID, &batch[i]); err != nil {
			return err
		}
	}
	if _, err = tx.Exec(`UPDATE runs SET heartbeat_at = ?, updated_at = ? WHERE run_id = ?`, unixNow(), now(), s.RunID); err != nil {
		return err
	}
	if err = tx.Commit(); err == nil {
		s.answered += w.answered
	}
	return err
}

// rowWriter writes answers with a transaction's statements.
type rowWriter struct {
	ins, log *sql.Stmt
	requests *sharedRequests // nil: every answer holds its own request body
	answered int             // answered rows written (not a late copy of one stored)
}

// write upserts one answer of run and its attempts.
func (w *rowWriter) write(run string, a *Answer) error {
	d := a.Decision
	request, from, hash := w.requests.share(a)
	res, err := w.ins.Exec(run, a.Key, a.Record, nullString(a.StudyID, a.StudyID != ""), a.PromptID, a.Model,
		nullFloat(a.TopP, a.HasTopP), a.N, a.Answered,
		nullString(d.Raw, a.Answered), nullInt(int64(d.Binary), a.Answered), nullString(d.Description, a.Answered && d.HasDescription),
		nullFloat(d.Confidence, a.Answered && d.HasConfidence), nullString(d.Arguments, a.Answered && d.Arguments != ""),
		nullInt(a.Usage.Prompt, a.Answered), nullInt(a.Usage.Cached, a.Answered), nullInt(a.Usage.CacheWrite, a.Answered),
		nullInt(a.Usage.Completion, a.Answered),
		a.Billed.Prompt, a.Billed.Cached, a.Billed.CacheWrite, a.Billed.Completion,
		nullFloat(a.Price, a.HasPrice), nullString(a.Submodel, a.Submodel != ""), nullInt(int64(a.HTTPStatus), a.HTTPStatus != 0),
		a.Attempts, nullFloat(a.RunTime, a.Answered), a.Took, a.ReceivedAt.UTC().Format(timeLayout), nullString(a.Error, a.Error != ""),
		nullString(bytesText(request), request != nil), nullString(bytesText(a.Response), a.Response != nil),
		nullString(from, from != ""))
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return nil // the job was answered already; this late copy changes nothing
	}
	w.requests.held(a, request, hash)
	if a.Answered {
		w.answered++
	}
	for _, at := range a.Log {
		if _, err = w.log.Exec(run, a.Key, at.N, nullInt(int64(at.HTTPStatus), at.HTTPStatus != 0), nullString(at.Error, at.Error != ""),
			nullString(bytesText(at.Response), at.Response != nil), at.At.UTC().Format(timeLayout), at.Took); err != nil {
			return err
		}
	}
	return nil
}

// inTransaction runs f in one transaction, with a rowWriter of it, and commits when f succeeds.
func (s *Store) inTransaction(f func(*sql.Tx, *rowWriter) error) error {
	if insertHook != nil {
		if err := insertHook(); err != nil {
			return err
		}
	}
	tx, err := s.db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	ins, err := tx.Prepare(insertAnswer)
	if err != nil {
		return err
	}
	defer ins.Close()
	log, err := tx.Prepare(insertAttempt)
	if err != nil {
		return err
	}
	defer log.Close()
	if err := f(tx, &rowWriter{ins: ins, log: log}); err != nil {
		return err
	}
	return tx.Commit()
}

// Close commits what is queued, records how the run ended and closes the file.
func (s *Session) Close(status string) error {
	if s.closed {
		return s.Err()
	}
	s.closed = true
	if s.queue != nil {
		close(s.queue)
		<-s.written
	}
	if s.Err() != nil {
		status = StatusStopped
	}
	s.writeSettled()
	if status == StatusCompleted && !s.allAnswered() {
		status = StatusIncomplete
	}
	s.release(status)
	return s.Err()
}

// allAnswered reports whether the store holds an answer for every job of the run: a run is
// "completed" only then, whatever the call that ends it saw (screen_errors() sees only the jobs
// it re-sends). Counted as the rows are written: a count of a million rows at the end would read
// every page of the run.
func (s *Session) allAnswered() bool {
	var jobs int
	err := s.store.db.QueryRow(`SELECT jobs FROM runs WHERE run_id = ?`, s.RunID).Scan(&jobs)
	return err == nil && s.answered+s.settledTotal() >= jobs
}

// Settled records how many jobs of the run adaptive repetitions left unsent because their group's
// verdict was settled: they count as done for the run's completion. whole: the count is the whole
// run's (a call over every job); otherwise it adds to the run's (screen_errors()). Written at
// Close, in a table of its own created on first use, so that a store without adaptive runs is
// unchanged.
func (s *Session) Settled(n int, whole bool) {
	s.settled, s.settledWhole, s.settledSet = n, whole, true
}

func (s *Session) writeSettled() {
	if !s.settledSet || s.Err() != nil {
		return
	}
	db := s.store.db
	_, err := db.Exec(`CREATE TABLE IF NOT EXISTS settled_jobs (run_id TEXT PRIMARY KEY, settled INTEGER NOT NULL)`)
	if err == nil {
		update := "settled + excluded.settled"
		if s.settledWhole {
			update = "excluded.settled"
		}
		_, err = db.Exec(`INSERT INTO settled_jobs (run_id, settled) VALUES (?, ?)
			ON CONFLICT (run_id) DO UPDATE SET settled = `+update, s.RunID, s.settled)
	}
	if err != nil {
		s.errMu.Lock()
		s.err = storeError(s.store.Path, "could not record the settled jobs of the run", err)
		s.errMu.Unlock()
	}
}

// settledTotal is the run's count of settled jobs (0 when it has none).
func (s *Session) settledTotal() int {
	var n int
	if err := s.store.db.QueryRow(`SELECT settled FROM settled_jobs WHERE run_id = ?`, s.RunID).Scan(&n); err != nil {
		return 0
	}
	return n
}

func (s *Session) release(status string) {
	_, err := s.store.db.Exec(`UPDATE runs SET status = ?, owner_pid = NULL, owner_host = NULL, updated_at = ? WHERE run_id = ?`,
		status, now(), s.RunID)
	if err != nil && s.Err() == nil {
		s.errMu.Lock()
		s.err = storeError(s.store.Path, "could not record the end of the run", err)
		s.errMu.Unlock()
	}
	activeMu.Lock()
	delete(active, s.RunID)
	activeMu.Unlock()
	s.store.Close()
}

// bytesText is a body as the text SQLite stores, without a copy: the driver binds a string's bytes
// for SQLite to copy (SQLITE_TRANSIENT) and keeps nothing, and a stored body is never changed
// after its exchange. string(b) copied every request and response once more per answer.
func bytesText(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

func nullString(v string, ok bool) sql.NullString { return sql.NullString{String: v, Valid: ok} }
func nullInt(v int64, ok bool) sql.NullInt64      { return sql.NullInt64{Int64: v, Valid: ok} }
func nullFloat(v float64, ok bool) sql.NullFloat64 {
	return sql.NullFloat64{Float64: v, Valid: ok}
}
