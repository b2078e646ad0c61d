package engine

import (
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/tabscreen/tabscreen/golib/clock"
)

var titleNumber = regexp.MustCompile(`Title (\d+)`)

// recordOf reads the record's title number and the repetition (seed - 100 + 1) of a request.
func recordOf(body map[string]any) (record string, rep int) {
	msgs, _ := body["messages"].([]any)
	m, _ := msgs[0].(map[string]any)
	text, _ := m["content"].(string)
	seed, _ := body["seed"].(float64)
	return titleNumber.FindStringSubmatch(text)[1], int(seed) - 100 + 1
}

func TestRepetitionsAreSentAfterTheFirstAnswer(t *testing.T) {
	cases := []struct {
		name      string
		cache     bool
		failFirst string // the record whose first repetition fails (HTTP 400)
	}{
		{"caching", true, ""},
		{"caching, a first answer fails", true, "2"},
		{"caching off", false, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			answered := map[string]bool{} // records whose first repetition has been answered
			var early []string            // later repetitions that arrived before it
			var keys []any
			fc := clock.NewFake(time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC))
			fk := newFake(t, func(_ int64, body map[string]any) (int, map[string]string, string) {
				rec, rep := recordOf(body)
				mu.Lock()
				defer mu.Unlock()
				keys = append(keys, body["prompt_cache_key"])
				if rep > 1 && !answered[rec] {
					early = append(early, rec)
				}
				if rep == 1 {
					// Marked before the reply is written: the client cannot have it earlier.
					answered[rec] = true
					if rec == tc.failFirst {
						return 400, nil, `{"error":{"message":"bad"}}`
					}
				}
				return 200, nil, toolReply("1")
			})
			cache, seed := tc.cache, int64(100)
			o := options(fk.srv.URL, func(o *Options) {
				o.Models[0].Reps = 5
				o.Cache = &cache
				o.Seed = &seed
				o.MaxActive = 4
			})
			titles, abstracts := make([]string, 6), make([]string, 6)
			for i := range titles {
				titles[i], abstracts[i] = "Title "+string(rune('1'+i)), "Abstract"
			}
			var r *Run
			err := drive(fc, func() error {
				var err error
				if r, err = Start(o, Records{Titles: titles, Abstracts: abstracts}, "k", WithClock(fc)); err != nil {
					return err
				}
				r.Wait()
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			wantFailed := int64(0)
			if tc.failFirst != "" {
				wantFailed = 1
			}
			if r.done.Load() != 30 || r.failed.Load() != wantFailed || len(keys) != 30 {
				t.Fatalf("done %d, failed %d, %d requests", r.done.Load(), r.failed.Load(), len(keys))
			}
			if tc.cache && len(early) > 0 {
				t.Fatalf("repetitions of records %v were sent before their first answer", early)
			}
			for _, k := range keys {
				if (k != nil) != tc.cache {
					t.Fatalf("prompt_cache_key %v with caching %v", k, tc.cache)
				}
			}
		})
	}
}

func TestCacheLayoutCountsTheRequestsSharingAPrefix(t *testing.T) {
	o := options("http://x", func(o *Options) {
		o.Prompts = []string{"  Is it   about therapy? ", "p2"}
		o.Models = []ModelOptions{{Name: "a", Reps: 3, RPM: 1}, {Name: "b", Reps: 1, RPM: 1}}
		o.TopP = []float64{0.5, 1}
	})
	jobs, _, err := expandJobs(o, 4)
	if err != nil {
		t.Fatal(err)
	}
	results := make([]result, len(jobs))
	results[0].done = true // answered before: not sent again
	l := newCacheLayout(o, jobs, results)
	if l.prefixLen[0] != len("Is it about therapy?") || l.keys[0] == l.keys[1] {
		t.Fatalf("prefix %d, keys %v", l.prefixLen[0], l.keys)
	}
	// prompt 1, model a: 4 records x 2 top_p x 3 reps, one answered; model b: 4 x 2 x 1.
	if l.promptReuse[0] != 23 || l.promptReuse[1] != 8 {
		t.Fatalf("prompt reuse %v", l.promptReuse)
	}
	if l.groupSize[l.group[0]] != 5 || l.groupSize[l.group[3]] != 6 {
		t.Fatalf("record reuse %d and %d", l.groupSize[l.group[0]], l.groupSize[l.group[3]])
	}
	q := newDispatchQueue(jobs, results, l, true, nil, nil)
	// The group with an answered job sends its 5 others as first jobs; each of the 15 other groups
	// has one first job, the rest (5 in a group of model a, 1 of model b) wait for it.
	if len(q.firsts) != 5+15 || q.wait != 7*5+8*1 {
		t.Fatalf("%d first jobs, %d waiting", len(q.firsts), q.wait)
	}
}
