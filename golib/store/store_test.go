package store

import (
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/tabscreen/tabscreen/golib/screen"
)

func spec(fp string) RunSpec {
	return RunSpec{Fingerprint: fp, Provider: "a", Endpoint: "http://127.0.0.1/v1/chat/completions",
		Models: []string{"m"}, Prompts: 1, Records: 3, Jobs: 3, Settings: []byte(`{}`)}
}

func answer(record int32, ok bool) Answer {
	a := Answer{Key: JobKey(record, 1, "m", 0, false, 1), Record: record, PromptID: 1, Model: "m", N: 1,
		Answered: ok, Attempts: 1, ReceivedAt: time.Now(), Request: []byte(`{"q":1}`), Response: []byte(`{"r":1}`),
		Billed: screen.Usage{Prompt: 10, Completion: 2}, HTTPStatus: 200}
	if ok {
		a.Decision = screen.Decision{Raw: "1", Binary: 1, Description: "why", HasDescription: true,
			Arguments: `{"verdict":"1","why":"why","pages":[3,4]}`}
		a.Usage = a.Billed
	} else {
		a.Error, a.HTTPStatus = "HTTP 500", 500
		a.Log = []Attempt{{N: 1, HTTPStatus: 500, Error: "HTTP 500", Response: []byte("oops"), At: time.Now()}}
	}
	return a
}

// closeAndReopen completes the session's run and opens its file again, to read what was stored.
func closeAndReopen(t *testing.T, s *Session, path string) *Store {
	t.Helper()
	if err := s.Close(StatusCompleted); err != nil {
		t.Fatal(err)
	}
	st, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func claim(t *testing.T, path string, s RunSpec) *Session {
	t.Helper()
	st, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	sess, err := st.Claim(s)
	if err != nil {
		st.Close()
		t.Fatal(err)
	}
	sess.Start(func(err error) { t.Errorf("write failed: %v", err) }, nil)
	return sess
}

// withJobs is sp for a run of n jobs: a run is completed once the store holds n answers.
func withJobs(sp RunSpec, n int) RunSpec {
	sp.Jobs = n
	return sp
}

func TestResumeKeepsAnswersAndRetriesFailures(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.sqlite")
	s := claim(t, path, withJobs(spec("fp1"), 2))
	first := s.RunID
	s.Save(answer(1, true))
	s.Save(answer(2, false))
	if err := s.Close(StatusInterrupted); err != nil {
		t.Fatal(err)
	}

	s = claim(t, path, withJobs(spec("fp1"), 2))
	if s.RunID != first || !s.Resumed || s.Reused {
		t.Fatalf("interrupted run not resumed (or taken for a completed one): %s resumed=%v reused=%v", s.RunID, s.Resumed, s.Reused)
	}
	if a, ok := s.Stored(JobKey(1, 1, "m", 0, false, 1)); !ok || a.Decision.Raw != "1" || a.Decision.Description != "why" ||
		a.Decision.Arguments != `{"verdict":"1","why":"why","pages":[3,4]}` || a.Usage.Prompt != 10 {
		t.Fatalf("stored answer not loaded: %+v %v", a, ok)
	}
	if _, ok := s.Stored(JobKey(2, 1, "m", 0, false, 1)); ok {
		t.Fatal("a failed job counts as answered")
	}
	if u := s.StoredFailedUsage(JobKey(2, 1, "m", 0, false, 1)); u.Prompt != 10 {
		t.Fatalf("billed tokens of the failure lost: %+v", u)
	}
	// The failure is answered now; an answered job is never overwritten by a later failure.
	s.Save(answer(2, true))
	s.Save(answer(1, false))
	if err := s.Close(StatusCompleted); err != nil {
		t.Fatal(err)
	}

	st, _ := Open(path)
	defer st.Close()
	tab, err := st.Answers(first)
	if err != nil {
		t.Fatal(err)
	}
	ans, _ := tab.Col("answered")
	att, _ := tab.Col("attempts")
	if tab.NumRows != 2 || !ans.Bool[0] || !ans.Bool[1] || att.I32[1] != 2 {
		t.Fatalf("answers after resume: rows=%d answered=%v attempts=%v", tab.NumRows, ans.Bool, att.I32)
	}
	log, err := st.Log(first)
	if err != nil {
		t.Fatal(err)
	}
	outcome, _ := log.Col("outcome")
	if got := strings.Join(outcome.Str, ","); got != "answer,retried,answer" {
		t.Fatalf("audit log outcomes = %s", got)
	}
	runs, _ := st.Runs()
	status, _ := runs.Col("status")
	if runs.NumRows != 1 || status.Str[0] != StatusCompleted {
		t.Fatalf("runs: %d %v", runs.NumRows, status.Str)
	}
}

func TestCompletedRunIsNotReusedUnlessAsked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.sqlite")
	s := claim(t, path, withJobs(spec("fp"), 1))
	first := s.RunID
	s.Save(answer(1, true))
	s.Close(StatusCompleted)

	tests := []struct {
		name   string
		reuse  bool
		resume bool
	}{
		{"reused when asked", true, true},
		{"new run by default", false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sp := spec("fp")
			sp.Reuse = tc.reuse
			s := claim(t, path, sp)
			defer s.Close(StatusCompleted)
			if s.Resumed != tc.resume || s.Reused != tc.resume || (s.RunID == first) != tc.resume {
				t.Fatalf("resumed=%v reused=%v run=%s (first %s)", s.Resumed, s.Reused, s.RunID, first)
			}
		})
	}
}

func TestRunningRunOfALiveProcessIsRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.sqlite")
	s := claim(t, path, spec("fp"))
	defer s.Close(StatusCompleted)
	// Same process, run active: a second claim is refused.
	st, _ := Open(path)
	_, err := st.Claim(spec("fp"))
	st.Close()
	var se *Error
	if !errors.As(err, &se) || se.Class != "tabscreen_error_store_busy" || !strings.Contains(se.Message, s.RunID) {
		t.Fatalf("want a busy error naming the run, got %v", err)
	}
	// Another fingerprint is another run, screened alongside.
	other := claim(t, path, spec("other"))
	other.Close(StatusCompleted)
}

func TestRunOfADeadProcessIsTakenOver(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.sqlite")
	s := claim(t, path, spec("fp"))
	s.Save(answer(1, true))
	s.Close(StatusCompleted)
	// Make it look like a process that was killed mid-run.
	dead := exitedChild(t)
	db, _ := sql.Open("sqlite3", path)
	if _, err := db.Exec(`UPDATE runs SET status = 'running', owner_pid = ?, owner_host = ?`, dead, hostname()); err != nil {
		t.Fatal(err)
	}
	db.Close()
	again := claim(t, path, spec("fp"))
	defer again.Close(StatusCompleted)
	if !again.Resumed || again.RunID != s.RunID {
		t.Fatal("the dead process's run was not resumed")
	}
}

func TestUnusableFilesFailBeforeAnything(t *testing.T) {
	dir := t.TempDir()
	notDB := filepath.Join(dir, "junk.sqlite")
	os.WriteFile(notDB, []byte(strings.Repeat("this is not a database\n", 200)), 0o600)
	readOnly := filepath.Join(dir, "ro")
	os.Mkdir(readOnly, 0o500)
	tests := []struct {
		name, path, want string
	}{
		{"not a database", notDB, "not an SQLite database"},
		{"a folder", dir, "is a folder"},
		{"empty path", " ", "path is empty"},
	}
	// Root writes anywhere, and Windows has no permission bits on folders.
	if os.Getuid() != 0 && runtime.GOOS != "windows" {
		tests = append(tests, struct{ name, path, want string }{"folder not writable", filepath.Join(readOnly, "sub", "a.sqlite"), "cannot be created"})
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st, err := Open(tc.path)
			if err == nil {
				st.Close()
				t.Fatal("no error")
			}
			var se *Error
			if !errors.As(err, &se) || se.Class != "tabscreen_error_store" || !strings.Contains(se.Message, tc.want) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
		})
	}
}

func TestWriteFailureIsReportedOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.sqlite")
	st, _ := Open(path)
	s, err := st.Claim(spec("fp"))
	if err != nil {
		t.Fatal(err)
	}
	failures := make(chan error, 4)
	s.Start(func(err error) { failures <- err }, nil)
	// A job key longer than SQLite's maximum string length cannot be stored.
	bad := answer(1, true)
	if _, err := st.db.Exec(`PRAGMA max_page_count = 1`); err != nil { // the file may not grow: "disk full"
		t.Fatal(err)
	}
	bad.Request = []byte(strings.Repeat("x", 1<<20))
	s.Save(bad)
	s.Save(answer(2, true))
	err = s.Close(StatusCompleted)
	if err == nil || len(failures) != 1 {
		t.Fatalf("close err=%v, failures reported %d", err, len(failures))
	}
	if !strings.Contains(err.Error(), "disk is full") {
		t.Fatalf("message: %v", err)
	}
}

func TestDelete(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.sqlite")
	s := claim(t, path, spec("fp"))
	s.Save(answer(1, false))
	s.Close(StatusCompleted)
	st, _ := Open(path)
	defer st.Close()
	n, err := st.Delete([]string{s.RunID, "no-such-run"})
	if err != nil || n != 1 {
		t.Fatalf("deleted %d, %v", n, err)
	}
	for _, table := range []string{"runs", "answers", "attempts"} {
		var left int
		st.db.QueryRow("SELECT count(*) FROM " + table).Scan(&left)
		if left != 0 {
			t.Errorf("%s keeps %d rows", table, left)
		}
	}
	if _, err := st.Answers(s.RunID); err == nil || !strings.Contains(err.Error(), "has no run") {
		t.Fatalf("answers of a deleted run: %v", err)
	}
}

// A file of schema 1 is brought up to date when opened: its rows keep what they had (the log's time
// of their last attempt is their run_time, which was that attempt's), new rows keep both times.
func TestSchemaOneIsMigrated(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v1.sqlite")
	v1 := schema
	for _, later := range []string{"  took                      REAL,\n", "  tool_arguments            TEXT,\n", "  request_from              TEXT,\n"} {
		v1 = strings.Replace(v1, later, "", 1)
	}
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{v1, "PRAGMA user_version = 1",
		`INSERT INTO runs (run_id, fingerprint, provider, endpoint, models, prompts, records, jobs, status, created_at, updated_at, settings)
		 VALUES ('old', 'fp', 'a', 'http://x', 'm', 1, 2, 2, 'interrupted', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z', '{}')`,
		`INSERT INTO answers (run_id, job_key, record, promptid, model, n, answered, decision_llm, decision_binary,
		 billed_prompt_tokens, billed_cached_tokens, billed_cache_write_tokens, billed_completion_tokens, attempts, run_time, received_at)
		 VALUES ('old', '1/1/m/-/1', 1, 1, 'm', 1, 1, '1', 1, 10, 0, 0, 2, 1, 0.25, '2026-01-01T00:00:00.000Z')`,
	} {
		if _, err := db.Exec(stmt); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()

	s := claim(t, path, RunSpec{Fingerprint: "fp", Provider: "a", Endpoint: "http://x", Models: []string{"m"}, Prompts: 1,
		Records: 2, Jobs: 2, Settings: []byte(`{}`)})
	if !s.Resumed || s.RunID != "old" {
		t.Fatalf("the run of the old file was not resumed: %s", s.RunID)
	}
	a := answer(2, true)
	a.RunTime, a.Took = 3, 0.5
	s.Save(a)
	st := closeAndReopen(t, s, path)
	var version int
	if err := st.db.QueryRow("PRAGMA user_version").Scan(&version); err != nil || version != schemaVersion {
		t.Fatalf("user_version %d (%v), want %d", version, err, schemaVersion)
	}
	answers, _ := st.Answers("old")
	log, _ := st.Log("old")
	runTime, _ := answers.Col("run_time")
	took, _ := log.Col("took")
	cases := []struct {
		name          string
		row           int
		runTime, took float64
	}{
		{"row of schema 1", 0, 0.25, 0.25},
		{"row of schema 2", 1, 3, 0.5},
	}
	for _, c := range cases {
		if runTime.F64[c.row] != c.runTime || took.F64[c.row] != c.took {
			t.Errorf("%s: run_time %g took %g, want %g and %g", c.name, runTime.F64[c.row], took.F64[c.row], c.runTime, c.took)
		}
	}
}

// A record's repetitions send the same request: its body is stored once, in an answered job's
// row, and the others name that job; the log gives every job its body. A failed job keeps its own
// copy (its row may be overwritten by a later answer), and a different request is stored apart.
func TestTheSameRequestIsStoredOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "shared.sqlite")
	s := claim(t, path, RunSpec{Fingerprint: "fp", Provider: "a", Endpoint: "http://x", Models: []string{"m"}, Prompts: 1,
		Records: 2, Jobs: 7, Settings: []byte(`{}`)})
	rep := func(record, n int32, ok bool, request string) Answer {
		a := answer(record, ok)
		a.Key, a.N, a.Request = JobKey(record, 1, "m", 0, false, n), n, []byte(request)
		return a
	}
	first := `{"messages":[{"content":"record one"}]}`
	second := `{"messages":[{"content":"record two"}]}`
	s.Save(rep(1, 1, false, first)) // failed before any answer: holds its own copy
	for n := int32(2); n <= 5; n++ {
		s.Save(rep(1, n, true, first))
	}
	s.Save(rep(2, 1, true, second))
	s.Save(rep(2, 2, true, second))
	st := closeAndReopen(t, s, path)
	var copies, pointers int
	if err := st.db.QueryRow(`SELECT count(request_body), count(request_from) FROM answers WHERE run_id = ?`, s.RunID).Scan(&copies, &pointers); err != nil {
		t.Fatal(err)
	}
	// record 1: the failed job's copy and the first answer's; record 2: its first answer's
	if copies != 3 || pointers != 4 {
		t.Errorf("%d bodies stored and %d jobs pointing at one, want 3 and 4", copies, pointers)
	}
	log, err := st.Log(s.RunID)
	if err != nil {
		t.Fatal(err)
	}
	records, _ := log.Col("record")
	bodies, _ := log.Col("request_body")
	// 7 jobs, and the failed one's attempt
	if log.NumRows != 8 {
		t.Fatalf("%d log rows, want 8", log.NumRows)
	}
	for i := 0; i < log.NumRows; i++ {
		want := first
		if records.I32[i] == 2 {
			want = second
		}
		if got := bodies.Str[i]; got != want {
			t.Errorf("log row %d (record %d): request body %q, want %q", i, records.I32[i], got, want)
		}
	}
}

// A late copy of a job already answered changes nothing in its row, so it must not become the
// holder of a body: its row may hold none (it named another job), and a later job naming it would
// find no body in the log.
func TestALateCopyDoesNotHoldARequest(t *testing.T) {
	path := filepath.Join(t.TempDir(), "late.sqlite")
	body := `{"messages":[{"content":"record one"}]}`
	rep := func(n int32) Answer {
		a := answer(1, true)
		a.Key, a.N, a.Request = JobKey(1, 1, "m", 0, false, n), n, []byte(body)
		return a
	}
	s := claim(t, path, spec("late"))
	s.Save(rep(1)) // holds the body
	s.Save(rep(2)) // names job 1
	if err := s.Close(StatusInterrupted); err != nil {
		t.Fatal(err)
	}
	s = claim(t, path, spec("late"))
	if !s.Resumed {
		t.Fatal("the run was not resumed")
	}
	s.Save(rep(2)) // a late copy: job 2's row stays as it was, without a body of its own
	s.Save(rep(3))
	st := closeAndReopen(t, s, path)
	log, err := st.Log(s.RunID)
	if err != nil {
		t.Fatal(err)
	}
	bodies, _ := log.Col("request_body")
	if log.NumRows != 3 {
		t.Fatalf("%d log rows, want 3", log.NumRows)
	}
	for i, got := range bodies.Str {
		if got != body || !bodies.Valid[i] {
			t.Errorf("log row %d: request body %q (valid %v), want the record's", i, got, bodies.Valid[i])
		}
	}
}

// A run is completed only when the store holds an answer for each of its jobs, whatever the call
// that ends it says.
func TestCompletedOnlyWithEveryAnswerStored(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.sqlite")
	s := claim(t, path, spec("fp")) // 3 jobs
	s.Save(answer(1, true))
	s.Save(answer(2, true))
	st := closeAndReopen(t, s, path)
	runs, _ := st.Runs()
	if status, _ := runs.Col("status"); status.Str[0] != StatusIncomplete {
		t.Fatalf("a run with 2 of 3 answers stored is %s", status.Str[0])
	}
}

// The journal's answers go into their run once; a line cut short by a crash and the answers of a
// run deleted meanwhile are left out, and the journal is removed once its answers are stored.
func TestWriteKeptFromTheJournal(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.sqlite")
	s := claim(t, path, spec("fp"))
	run := s.RunID
	s.Save(answer(1, true))
	st := closeAndReopen(t, s, path)
	lines := []keptAnswer{{RunID: run, Answer: answer(2, true)}, {RunID: "deleted-run", Answer: answer(1, true)},
		{RunID: run, Answer: answer(2, true)}}
	if err := appendJournal(JournalPath(st.Path), lines); err != nil {
		t.Fatal(err)
	}
	f, _ := os.OpenFile(JournalPath(st.Path), os.O_WRONLY|os.O_APPEND, 0o600)
	f.WriteString(`{"run_id":"` + run + `","answer":{"Key":"3/1/m/-/1","Ans`)
	f.Close()
	if n, err := st.WriteKept(); err != nil || n != 1 {
		t.Fatalf("wrote %d answers, %v", n, err)
	}
	tab, _ := st.Answers(run)
	if tab.NumRows != 2 {
		t.Fatalf("%d rows in the run, want 2", tab.NumRows)
	}
	if _, err := os.Stat(JournalPath(st.Path)); !os.IsNotExist(err) {
		t.Fatalf("journal not removed: %v", err)
	}
	if n, err := st.WriteKept(); err != nil || n != 0 {
		t.Fatalf("a second time: %d, %v", n, err)
	}
}

// A store's name is a file name, whatever it holds: the driver cuts a plain path at '?', and a
// URI reads '#' and '%' as its own. Windows allows no '?' in a file name.
func TestStoreNamesWithURICharactersOpenThatFile(t *testing.T) {
	names := []string{"run#2.sqlite", "100%.sqlite", "a b.sqlite"}
	if runtime.GOOS != "windows" {
		names = append(names, "run?1.sqlite")
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, name)
			st, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			st.Close()
			entries, _ := os.ReadDir(dir)
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			if len(names) == 0 || names[0] != name {
				t.Fatalf("files made: %v, want %q", names, name)
			}
			for _, n := range names {
				if !strings.HasPrefix(n, name) {
					t.Fatalf("a file %q made beside %q", n, name)
				}
			}
			if err := quickCheck(path); err != nil {
				t.Fatalf("the integrity check of %s: %v", name, err)
			}
			if _, err := Recover(path, filepath.Join(dir, "copy#"+name)); err != nil {
				t.Fatalf("recover: %v", err)
			}
			if _, err := os.Stat(filepath.Join(dir, "copy#"+name)); err != nil {
				t.Fatalf("the recovered copy is not where it was named: %v", err)
			}
		})
	}
}
