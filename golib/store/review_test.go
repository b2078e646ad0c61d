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
		got := current(t, st, "run")
		if len(got) != len(s.want) {
			t.Fatalf("step %d: decisions %v, want %v", i, got, s.want)
		}
		for k, v := range s.want {
			if got[k] != v {
				t.Fatalf("step %d: decisions %v, want %v", i, got, s.want)
			}
		}
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
