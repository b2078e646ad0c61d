package store

import (
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/tabscreen/tabscreen/golib/arrowio"
	"github.com/tabscreen/tabscreen/golib/screen"
)

// column is one output column of a query: its name in the table R gets, its Arrow kind and the
// SQL expression that yields it.
type column struct {
	name string
	kind arrowio.Kind
	expr string
}

func i32(name, expr string) column { return column{name, arrowio.KindInt32, expr} }
func f64(name, expr string) column { return column{name, arrowio.KindFloat64, expr} }
func str(name, expr string) column { return column{name, arrowio.KindUtf8, expr} }
func lgl(name, expr string) column { return column{name, arrowio.KindBool, expr} }

var runColumns = []column{
	str("run_id", "r.run_id"), str("status", "r.status"), str("provider", "r.provider"), str("endpoint", "r.endpoint"),
	str("models", "r.models"), i32("prompts", "r.prompts"), i32("records", "r.records"), i32("jobs", "r.jobs"),
	i32("answered", "(SELECT count(*) FROM answers a WHERE a.run_id = r.run_id AND a.answered = 1)"),
	i32("failed", "(SELECT count(*) FROM answers a WHERE a.run_id = r.run_id AND a.answered = 0)"),
	f64("price_dollar", "(SELECT sum(price_dollar) FROM answers a WHERE a.run_id = r.run_id)"),
	str("created_at", "r.created_at"), str("updated_at", "r.updated_at"), str("fingerprint", "r.fingerprint"),
}

// batchesColumn summarises a run's batches in the runs table (NULL when the file has none).
var batchesColumn = str("batches", `(SELECT group_concat(coalesce(b.provider_id, b.tag) || ' ' || b.state ||
	CASE b.collected WHEN 1 THEN ' (collected)' ELSE '' END, ', ') FROM batches b WHERE b.run_id = r.run_id AND b.state != 'void')`)

var jobColumns = []column{
	str("run_id", "a.run_id"), i32("record", "a.record"), str("studyid", "a.studyid"), i32("promptid", "a.promptid"),
	str("model", "a.model"), f64("top_p", "a.top_p"), i32("n", "a.n"),
}

var answerColumns = append(append([]column{}, jobColumns...),
	lgl("answered", "a.answered"), str("decision_llm", "a.decision_llm"), i32("decision_binary", "a.decision_binary"),
	str("detailed_description", "a.detailed_description"), f64("confidence", "a.confidence"),
	str("tool_arguments", "a.tool_arguments"),
	i32("prompt_tokens", "a.prompt_tokens"), i32("cached_tokens", "a.cached_tokens"),
	i32("cache_write_tokens", "a.cache_write_tokens"), i32("completion_tokens", "a.completion_tokens"),
	f64("price_dollar", "a.price_dollar"), str("submodel", "a.submodel"), i32("http_status", "a.http_status"),
	i32("attempts", "a.attempts"), f64("run_time", "a.run_time"), f64("took", "a.took"), str("received_at", "a.received_at"), str("error", "a.error"),
)

// The audit log: every attempt of every job, the failed ones from the attempts table and the last
// one (the answer, or the final failure) from the answers table.
var logColumns = append(append([]column{}, jobColumns...),
	i32("attempt", "l.attempt"), str("at", "l.at"), f64("took", "l.took"), str("outcome", "l.outcome"),
	i32("http_status", "l.http_status"), str("error", "l.error"), str("request_body", "coalesce(a.request_body, (SELECT h.request_body FROM answers h WHERE h.run_id = a.run_id AND h.job_key = a.request_from))"),
	str("response_body", "l.response_body"),
)

const logSource = `(SELECT run_id, job_key, attempt, at, took, 'retried' AS outcome, http_status, error, response_body FROM attempts
  UNION ALL
  SELECT run_id, job_key, attempts, received_at, coalesce(took, run_time), CASE answered WHEN 1 THEN 'answer' ELSE 'failed' END,
         http_status, error, response_body FROM answers) l JOIN answers a ON a.run_id = l.run_id AND a.job_key = l.job_key`

// Runs lists the runs with their counts and cost, oldest first.
func (s *Store) Runs() (*arrowio.Table, error) {
	cols := append(append([]column{}, runColumns...), batchesColumn)
	if !s.hasBatches() {
		cols[len(cols)-1].expr = "NULL"
	}
	return s.table(cols, "runs r", "", "r.created_at, r.rowid", nil)
}

// Answers returns a run's jobs, answered and failed, in the order of the answers table.
func (s *Store) Answers(runID string) (*arrowio.Table, error) {
	if err := s.mustHaveRun(runID); err != nil {
		return nil, err
	}
	return s.table(answerColumns, "answers a", "a.run_id = ?", "a.promptid, a.model, a.top_p, a.record, a.n", []any{runID})
}

// Log returns a run's audit log, one row per attempt.
func (s *Store) Log(runID string) (*arrowio.Table, error) {
	if err := s.mustHaveRun(runID); err != nil {
		return nil, err
	}
	return s.table(logColumns, logSource, "l.run_id = ?", "a.promptid, a.model, a.top_p, a.record, a.n, l.at, l.attempt", []any{runID})
}

// Delete removes runs and everything stored for them; it refuses a run another process is writing.
func (s *Store) Delete(runIDs []string) (int, error) {
	batches := s.hasBatches()
	tx, err := s.db.Begin()
	if err != nil {
		return 0, storeError(s.Path, "cannot be written", err)
	}
	defer tx.Rollback()
	deleted := 0
	for _, id := range runIDs {
		run, err := scanRunRow(tx.QueryRow(`SELECT `+runRowColumns+` FROM runs WHERE run_id = ?`, id))
		if err == sql.ErrNoRows {
			continue
		}
		if err != nil {
			return 0, storeError(s.Path, "cannot be read", err)
		}
		if run.busy() {
			return 0, &Error{Class: "tabscreen_error_store_busy", Message: fmt.Sprintf("run %s is being screened right now (process %d); it can be deleted once it has ended", id, run.pid.Int64)}
		}
		tables := []string{"attempts", "answers", "runs"}
		if batches {
			if _, err := tx.Exec("DELETE FROM batch_jobs WHERE batch_id IN (SELECT batch_id FROM batches WHERE run_id = ?)", id); err != nil {
				return 0, storeError(s.Path, "cannot be written", err)
			}
			tables = append(tables, "batches")
		}
		for _, table := range tables {
			if _, err := tx.Exec("DELETE FROM "+table+" WHERE run_id = ?", id); err != nil {
				return 0, storeError(s.Path, "cannot be written", err)
			}
		}
		deleted++
	}
	if err := tx.Commit(); err != nil {
		return 0, storeError(s.Path, "cannot be written", err)
	}
	return deleted, nil
}

func (s *Store) mustHaveRun(runID string) error {
	var one int
	err := s.db.QueryRow(`SELECT 1 FROM runs WHERE run_id = ?`, runID).Scan(&one)
	if err == sql.ErrNoRows {
		return &Error{Class: "tabscreen_error_store_run", Message: fmt.Sprintf("the answer store %s has no run %q (screen_store() lists its runs)", s.Path, runID)}
	}
	if err != nil {
		return storeError(s.Path, "cannot be read", err)
	}
	return nil
}

// table runs a query and returns its rows as an Arrow table with the columns' kinds; SQL NULL
// becomes a null value.
func (s *Store) table(cols []column, from, where, order string, args []any) (*arrowio.Table, error) {
	exprs := make([]string, len(cols))
	for i, c := range cols {
		exprs[i] = c.expr
	}
	q := "SELECT " + strings.Join(exprs, ", ") + " FROM " + from
	if where != "" {
		q += " WHERE " + where
	}
	q += " ORDER BY " + order
	rows, err := s.db.Query(q, args...)
	if err != nil {
		return nil, storeError(s.Path, "cannot be read", err)
	}
	defer rows.Close()
	values := make([]any, len(cols))
	strs := make([]sql.NullString, len(cols))
	ints := make([]sql.NullInt64, len(cols))
	floats := make([]sql.NullFloat64, len(cols))
	for i, c := range cols {
		switch c.kind {
		case arrowio.KindUtf8:
			values[i] = &strs[i]
		case arrowio.KindFloat64:
			values[i] = &floats[i]
		default:
			values[i] = &ints[i]
		}
	}
	out := make([]arrowio.Column, len(cols))
	for i, c := range cols {
		out[i] = arrowio.Column{Name: c.name, Kind: c.kind}
	}
	n := 0
	for rows.Next() {
		if err := rows.Scan(values...); err != nil {
			return nil, storeError(s.Path, "holds a value that cannot be read", err)
		}
		for i := range cols {
			o := &out[i]
			switch o.Kind {
			case arrowio.KindUtf8:
				o.Str, o.Valid = append(o.Str, strs[i].String), append(o.Valid, strs[i].Valid)
			case arrowio.KindFloat64:
				o.F64, o.Valid = append(o.F64, floats[i].Float64), append(o.Valid, floats[i].Valid)
			case arrowio.KindInt32:
				o.I32, o.Valid = append(o.I32, int32(ints[i].Int64)), append(o.Valid, ints[i].Valid)
			case arrowio.KindBool:
				o.Bool, o.Valid = append(o.Bool, ints[i].Int64 != 0), append(o.Valid, ints[i].Valid)
			}
		}
		n++
	}
	if err := rows.Err(); err != nil {
		return nil, storeError(s.Path, "cannot be read", err)
	}
	t := arrowio.NewTable(n)
	for i := range out {
		if n == 0 {
			out[i].Valid = nil
			switch out[i].Kind {
			case arrowio.KindUtf8:
				out[i].Str = []string{}
			case arrowio.KindFloat64:
				out[i].F64 = []float64{}
			case arrowio.KindInt32:
				out[i].I32 = []int32{}
			case arrowio.KindBool:
				out[i].Bool = []bool{}
			}
		}
		t.Columns = append(t.Columns, out[i])
	}
	return t, nil
}

// Row is one stored job as a run's result reads it.
type Row struct {
	Record, PromptID int32
	Model            string
	TopP             float64
	HasTopP          bool
	N                int32
	Answered         bool
	Decision         screen.Decision
	// Billed is every token the job was billed, this call's and earlier ones'.
	Billed     screen.Usage
	Submodel   string
	RunTime    float64
	ReceivedAt time.Time
	Error      string
}

// ScanRun calls fn with every stored job of a run, in no particular order. The row is reused
// between calls: fn copies what it keeps.
func (s *Store) ScanRun(runID string, fn func(*Row)) error {
	rows, err := s.db.Query(`SELECT record, promptid, model, top_p, n, answered, decision_llm, decision_binary,
		detailed_description, confidence, tool_arguments, billed_prompt_tokens, billed_cached_tokens,
		billed_cache_write_tokens, billed_completion_tokens, submodel, run_time, received_at, error
		FROM answers WHERE run_id = ?`, runID)
	if err != nil {
		return storeError(s.Path, "cannot be read", err)
	}
	defer rows.Close()
	var r Row
	var topP, confidence, runTime sql.NullFloat64
	var decision, description, arguments, submodel, errText sql.NullString
	var binary sql.NullInt64
	var received string
	for rows.Next() {
		if err := rows.Scan(&r.Record, &r.PromptID, &r.Model, &topP, &r.N, &r.Answered, &decision, &binary,
			&description, &confidence, &arguments, &r.Billed.Prompt, &r.Billed.Cached, &r.Billed.CacheWrite,
			&r.Billed.Completion, &submodel, &runTime, &received, &errText); err != nil {
			return storeError(s.Path, "holds a row that cannot be read", err)
		}
		r.TopP, r.HasTopP = topP.Float64, topP.Valid
		r.Decision = screen.Decision{Raw: decision.String, Binary: int32(binary.Int64), Description: description.String,
			HasDescription: description.Valid, Confidence: confidence.Float64, HasConfidence: confidence.Valid,
			Arguments: arguments.String}
		r.Submodel, r.RunTime, r.Error = submodel.String, runTime.Float64, errText.String
		r.ReceivedAt, _ = time.Parse(timeLayout, received)
		fn(&r)
	}
	if err := rows.Err(); err != nil {
		return storeError(s.Path, "cannot be read", err)
	}
	return nil
}
