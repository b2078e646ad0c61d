package store

import (
	"database/sql"
	"errors"
	"path/filepath"
	"testing"
)

func reviewStore(t *testing.T) *Store {
	t.Helper()
	st, err := OpenDurable(filepath.Join(t.TempDir(), "r.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.EnsureReview(); err != nil {
		t.Fatal(err)
	}
	return st
}

func reviewItem(id string) ReviewItem {
	return ReviewItem{StudyID: id, Group: "1/m/1", PromptID: sql.NullInt64{Int64: 1, Valid: true},
		Model: sql.NullString{String: "m", Valid: true}, TopP: sql.NullFloat64{Float64: 1, Valid: true}}
}

func noItems(string, string) (ReviewItem, bool) { return ReviewItem{}, false }

// current returns the reviewers' decisions as "studyid/reviewer=decision[:note]".
func current(t *testing.T, st *Store, run string) map[string]string {
	t.Helper()
	ds, err := st.ReviewDecisions(run)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, d := range ds {
		v := d.Decision
		if d.Note != "" {
			v += ":" + d.Note
		}
		out[d.StudyID+"/"+d.Reviewer] = v
	}
	return out
}

// wantCurrent fails the test at the given step unless the run's decisions are want.
func wantCurrent(t *testing.T, st *Store, run string, step int, want map[string]string) {
	t.Helper()
	got := current(t, st, run)
	if len(got) != len(want) {
		t.Fatalf("step %d: decisions %v, want %v", step, got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("step %d: decisions %v, want %v", step, got, want)
		}
	}
}

func TestDecideAndUndo(t *testing.T) {
	type step struct {
		undo     string // reviewer who undoes; else a decision
		id, who  string
		decision string
		note     string
		want     map[string]string
	}
	steps := []step{
		{id: "1", who: "ann", decision: Include, want: map[string]string{"1/ann": "Include"}},
		{id: "2", who: "ann", decision: Exclude, note: "wrong population", want: map[string]string{"1/ann": "Include", "2/ann": "Exclude:wrong population"}},
		{id: "1", who: "bob", decision: Exclude, want: map[string]string{"1/ann": "Include", "2/ann": "Exclude:wrong population", "1/bob": "Exclude"}},
		// A changed mind replaces the decision; undo brings the earlier one back.
		{id: "1", who: "ann", decision: Unsure, want: map[string]string{"1/ann": "Unsure", "2/ann": "Exclude:wrong population", "1/bob": "Exclude"}},
		{undo: "ann", want: map[string]string{"1/ann": "Include", "2/ann": "Exclude:wrong population", "1/bob": "Exclude"}},
		// Undo walks further back, and only through the reviewer's own decisions.
		{undo: "ann", want: map[string]string{"1/ann": "Include", "1/bob": "Exclude"}},
		{undo: "ann", want: map[string]string{"1/bob": "Exclude"}},
		{undo: "ann", want: map[string]string{"1/bob": "Exclude"}},
		{undo: "bob", want: map[string]string{}},
	}
	st := reviewStore(t)
	for i, s := range steps {
		if s.undo != "" {
			if _, err := st.Undo("run", s.undo, noItems); err != nil {
				t.Fatalf("step %d: %v", i, err)
			}
		} else if _, err := st.Decide("run", reviewItem(s.id), Decision{Reviewer: s.who, Decision: s.decision, Note: s.note, Queue: "check"}); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		wantCurrent(t, st, "run", i, s.want)
	}
	// Another run of the same store is untouched by all this.
	if got := current(t, st, "other"); len(got) != 0 {
		t.Fatalf("other run has decisions: %v", got)
	}
}

func TestUndoReportsWhatItRestored(t *testing.T) {
	st := reviewStore(t)
	if u, err := st.Undo("run", "ann", noItems); err != nil || u != nil {
		t.Fatalf("undo with nothing to undo: %+v %v", u, err)
	}
	for _, d := range []string{Exclude, Include} {
		if _, err := st.Decide("run", reviewItem("7"), Decision{Reviewer: "ann", Decision: d}); err != nil {
			t.Fatal(err)
		}
	}
	u, err := st.Undo("run", "ann", func(id, g string) (ReviewItem, bool) { return reviewItem(id), true })
	if err != nil || u == nil || u.StudyID != "7" || u.Now == nil || u.Now.Decision != Exclude {
		t.Fatalf("undo: %+v %v", u, err)
	}
	u, err = st.Undo("run", "ann", noItems)
	if err != nil || u == nil || u.Now != nil {
		t.Fatalf("undo of the first decision should leave none: %+v %v", u, err)
	}
}

func TestDecideRefusesWhatIsNotADecision(t *testing.T) {
	st := reviewStore(t)
	_, err := st.Decide("run", reviewItem("1"), Decision{Reviewer: "ann", Decision: "include"})
	var se *Error
	if !errors.As(err, &se) || se.Class != "tabscreen_error_review" {
		t.Fatalf("got %v", err)
	}
}

func TestDecisionsTable(t *testing.T) {
	st := reviewStore(t)
	it := reviewItem("3")
	it.Audit = true
	if _, err := st.Decide("run", it, Decision{Reviewer: "ann", Decision: Include, Note: "RCT <b>", Seconds: 12.5, Queue: "audit"}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Decide("run", ReviewItem{StudyID: "4", Group: "-/-/-"}, Decision{Reviewer: "ann", Decision: Exclude}); err != nil {
		t.Fatal(err)
	}
	tab, err := st.DecisionsTable("run")
	if err != nil {
		t.Fatal(err)
	}
	if tab.NumRows != 2 {
		t.Fatalf("rows: %d", tab.NumRows)
	}
	col := func(name string) int {
		for i, c := range tab.Columns {
			if c.Name == name {
				return i
			}
		}
		t.Fatalf("no column %s", name)
		return -1
	}
	if c := tab.Columns[col("note")]; c.Str[0] != "RCT <b>" || c.Valid[1] {
		t.Fatalf("note column: %+v", c)
	}
	if c := tab.Columns[col("audit")]; !c.Bool[0] || c.Bool[1] {
		t.Fatalf("audit column: %+v", c)
	}
	if c := tab.Columns[col("promptid")]; c.I32[0] != 1 || c.Valid[1] {
		t.Fatalf("promptid column: %+v", c)
	}
	if c := tab.Columns[col("seconds")]; c.F64[0] != 12.5 {
		t.Fatalf("seconds column: %+v", c)
	}
}

func TestAuditSpec(t *testing.T) {
	cases := []struct {
		name      string
		seed      int64
		size      int
		wantSeed  int64
		wantSize  int
		wantClass string
	}{
		{"first call fixes seed and size", 42, 20, 42, 20, ""},
		{"the same again", 42, 20, 42, 20, ""},
		{"no seed takes the stored one", 0, 20, 42, 20, ""},
		{"a larger sample", 42, 30, 42, 30, ""},
		{"a smaller sample is refused", 42, 10, 0, 0, "tabscreen_error_review_audit"},
		{"another seed is refused", 7, 30, 0, 0, "tabscreen_error_review_audit"},
	}
	st := reviewStore(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			spec, err := st.Audit("run", c.seed, c.size)
			if c.wantClass != "" {
				var se *Error
				if !errors.As(err, &se) || se.Class != c.wantClass {
					t.Fatalf("got %+v %v", spec, err)
				}
				return
			}
			if err != nil || spec.Seed != c.wantSeed || spec.Size != c.wantSize {
				t.Fatalf("got %+v %v", spec, err)
			}
		})
	}
	spec, err := st.Audit("fresh", 0, 5)
	if err != nil || spec.Seed < 1 || spec.Size != 5 {
		t.Fatalf("a random seed: %+v %v", spec, err)
	}
	if got, ok, err := st.StoredAudit("fresh"); err != nil || !ok || got != spec {
		t.Fatalf("stored audit: %+v %v %v", got, ok, err)
	}
	if _, ok, err := st.StoredAudit("none"); err != nil || ok {
		t.Fatalf("no audit: %v %v", ok, err)
	}
}

func TestAccessIsStablePerRun(t *testing.T) {
	st := reviewStore(t)
	port, token, err := st.Access("run")
	if err != nil || port != 0 || len(token) != 32 {
		t.Fatalf("first access: %d %q %v", port, token, err)
	}
	if err := st.SetAccessPort("run", 40123); err != nil {
		t.Fatal(err)
	}
	if err := st.SetAccessPort("run", 40999); err != nil {
		t.Fatal(err)
	}
	port2, token2, err := st.Access("run")
	if err != nil || port2 != 40123 || token2 != token {
		t.Fatalf("second access: %d %q %v", port2, token2, err)
	}
	_, other, err := st.Access("other")
	if err != nil || other == token {
		t.Fatalf("another run shares the token: %v", err)
	}
}

func countEvents(t *testing.T, st *Store, where string, args ...any) int {
	t.Helper()
	var n int
	if err := st.db.QueryRow(`SELECT count(*) FROM review_events WHERE `+where, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// A page sends a click again when it never saw the answer, and two tabs of one browser may both
// send it: the id stores it once, the resend is answered with the reviewer's decision now, and an
// undo takes back the decision itself.
func TestDecisionIDIsStoredOnce(t *testing.T) {
	type step struct {
		run, id, item string
		decision      string // "" undoes ann's latest
		wantNow       string // the answer: the decision now ("-": none)
		wantEvents    int    // events of run "run"
		want          map[string]string
	}
	steps := []step{
		{run: "run", id: "a", item: "1", decision: Include, wantNow: Include, wantEvents: 1, want: map[string]string{"1/ann": "Include"}},
		{run: "run", id: "a", item: "1", decision: Include, wantNow: Include, wantEvents: 1, want: map[string]string{"1/ann": "Include"}},
		{run: "run", id: "b", item: "1", decision: Exclude, wantNow: Exclude, wantEvents: 2, want: map[string]string{"1/ann": "Exclude"}},
		// A late copy of the first click changes nothing and says what holds now.
		{run: "run", id: "a", item: "1", decision: Include, wantNow: Exclude, wantEvents: 2, want: map[string]string{"1/ann": "Exclude"}},
		{run: "run", id: "c", item: "2", decision: Unsure, wantNow: Unsure, wantEvents: 3, want: map[string]string{"1/ann": "Exclude", "2/ann": "Unsure"}},
		{run: "run", id: "c", item: "2", decision: Unsure, wantNow: Unsure, wantEvents: 3, want: map[string]string{"1/ann": "Exclude", "2/ann": "Unsure"}},
		// After the resends, undo takes back the decision, not a copy of it.
		{run: "run", wantEvents: 3, want: map[string]string{"1/ann": "Exclude"}},
		{run: "run", id: "c", item: "2", decision: Unsure, wantNow: "-", wantEvents: 3, want: map[string]string{"1/ann": "Exclude"}},
		{run: "run", wantEvents: 3, want: map[string]string{"1/ann": "Include"}},
		// The same id in another run is that run's own decision.
		{run: "other", id: "a", item: "1", decision: Unsure, wantNow: Unsure, wantEvents: 3, want: map[string]string{"1/ann": "Include"}},
		// A page that gives no id makes an event per click, as before ids.
		{run: "run", item: "3", decision: Include, wantNow: Include, wantEvents: 4, want: map[string]string{"1/ann": "Include", "3/ann": "Include"}},
		{run: "run", item: "3", decision: Include, wantNow: Include, wantEvents: 5, want: map[string]string{"1/ann": "Include", "3/ann": "Include"}},
	}
	st := reviewStore(t)
	for i, s := range steps {
		if s.decision == "" {
			if u, err := st.Undo(s.run, "ann", noItems); err != nil || u == nil {
				t.Fatalf("step %d: undo %+v %v", i, u, err)
			}
		} else {
			d, err := st.Decide(s.run, reviewItem(s.item), Decision{ID: s.id, Reviewer: "ann", Decision: s.decision})
			if err != nil {
				t.Fatalf("step %d: %v", i, err)
			}
			if got := "-"; d != nil {
				got = d.Decision
				if got != s.wantNow || d.StudyID != s.item || d.Reviewer != "ann" {
					t.Fatalf("step %d: answered %+v, want %s", i, d, s.wantNow)
				}
			} else if s.wantNow != "-" {
				t.Fatalf("step %d: answered no decision, want %s", i, s.wantNow)
			}
		}
		if n := countEvents(t, st, "run_id = 'run'"); n != s.wantEvents {
			t.Fatalf("step %d: %d events, want %d", i, n, s.wantEvents)
		}
		wantCurrent(t, st, "run", i, s.want)
	}
}

// A file whose review tables were made before decision ids gains the column and its unique index,
// and keeps its events.
func TestEnsureReviewAddsDecisionIDs(t *testing.T) {
	st, err := OpenDurable(filepath.Join(t.TempDir(), "old.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if _, err := st.db.Exec(`CREATE TABLE review_events (
  event_id INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT NOT NULL, studyid TEXT NOT NULL, grp TEXT NOT NULL,
  reviewer TEXT NOT NULL, decision TEXT NOT NULL, note TEXT, seconds REAL, queue TEXT, at TEXT NOT NULL,
  undone INTEGER NOT NULL DEFAULT 0);
INSERT INTO review_events (run_id, studyid, grp, reviewer, decision, at) VALUES ('run', '1', '1/m/1', 'ann', 'Include', 'then')`); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ { // the second time finds the column there
		if err := st.EnsureReview(); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 2; i++ {
		if _, err := st.Decide("run", reviewItem("2"), Decision{ID: "x", Reviewer: "ann", Decision: Exclude}); err != nil {
			t.Fatal(err)
		}
	}
	if n := countEvents(t, st, "run_id = 'run'"); n != 2 {
		t.Fatalf("%d events, want the old one and one for id x", n)
	}
	if n := countEvents(t, st, "decision_id = 'x'"); n != 1 {
		t.Fatalf("%d events of id x", n)
	}
}
