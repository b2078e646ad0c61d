package engine

import (
	"fmt"
	"path/filepath"
	"testing"
)

func TestHoldingCountsTheAnswersOfTheRunACallWouldContinue(t *testing.T) {
	fk := newFake(t, func(n int64, _ map[string]any) (int, map[string]string, string) {
		if n%3 == 0 {
			return 400, nil, `{"error": {"message": "refused"}}`
		}
		return 200, nil, toolReply("1")
	})
	path := filepath.Join(t.TempDir(), "s.sqlite")
	o := options(fk.srv.URL, func(o *Options) {
		o.Store = &StoreOptions{Path: path}
		o.MaxActive = 1
		o.Models = []ModelOptions{{Name: "m1", Reps: 1, RPM: 600000}, {Name: "m2", Reps: 1, RPM: 600000}}
	})
	recs := Records{}
	for i := 0; i < 3; i++ {
		recs.Titles = append(recs.Titles, fmt.Sprintf("Title %d", i+1))
		recs.Abstracts = append(recs.Abstracts, fmt.Sprintf("Abstract %d", i+1))
	}
	before, err := Holding(path, o, recs)
	if err != nil || before.RunID != "" {
		t.Fatalf("before the run: %+v, %v", before, err)
	}
	r, err := Start(o, recs, "sk-test")
	if err != nil {
		t.Fatal(err)
	}
	r.Wait()
	if err := r.Release(); err != nil {
		t.Fatal(err)
	}
	h, err := Holding(path, o, recs)
	if err != nil {
		t.Fatal(err)
	}
	if h.RunID != r.StoreInfo().RunID || h.Status != "incomplete" || h.Answered["m1"]+h.Answered["m2"] != 4 {
		t.Errorf("holding %+v", h)
	}
	other := *o
	other.Prompts = []string{"Another prompt"}
	if h, _ := Holding(path, &other, recs); h.RunID != "" {
		t.Errorf("another call's holding %+v", h)
	}
}
