package screen

import (
	"encoding/json"
	"testing"
)

func TestFieldCharsCountsBlankFieldsAsNoInformation(t *testing.T) {
	tests := []struct {
		in    string
		valid bool
		chars int
		blank bool
	}{
		{"abc", true, 3, false},
		{"", false, 14, true},
		{" ", true, 14, true},
		{"NA", true, 14, true},
		{" NA\n", true, 14, true},
		{"\u00a0", true, 14, true},
		{"Jørgensen", true, 9, false},
		{"N A", true, 3, false},
	}
	for _, tc := range tests {
		chars, blank := FieldChars(tc.in, tc.valid)
		if chars != tc.chars || blank != tc.blank {
			t.Errorf("%q: %d %v, want %d %v", tc.in, chars, blank, tc.chars, tc.blank)
		}
	}
}

func TestEstimateCountsCharactersSchemaAndReps(t *testing.T) {
	in, out := 0.1, 0.5
	settings := func(s string) map[string]json.RawMessage {
		var m map[string]json.RawMessage
		_ = json.Unmarshal([]byte(s), &m)
		return m
	}
	rows := Estimate(EstimateInput{Prompts: []string{"12345678"}, Records: 2, RecordChars: 435, TopPs: 1,
		Models: []EstimateModel{
			{Name: "a", Reps: 2, ModelPrices: ModelPrices{PriceIn: &in, PriceOut: &out}, Settings: settings(`{"reasoning_effort":"none"}`)},
			{Name: "b", Reps: 1, Settings: settings(`{"reasoning_effort":"high","allowance_effort":null}`)},
			{Name: "c", Reps: 1, Settings: settings(`{"reasoning_effort":null,"allowance_effort":"medium"}`)},
		}})
	chars := 435.0 + 2*8
	if rows[0].Requests != 4 || rows[0].InputTokens != 2*(chars/4+2*150) || rows[0].OutputTokens != 40 {
		t.Fatalf("row a: %+v", rows[0])
	}
	if want := (rows[0].InputTokens*in + rows[0].OutputTokens*out) / 1e6; rows[0].Price == nil || *rows[0].Price != want {
		t.Fatalf("price %v, want %v", rows[0].Price, want)
	}
	// allowance_effort wins when the settings have it, null included (thinking off)
	if rows[1].OutputTokens != 2*10 || rows[1].Price != nil || rows[2].OutputTokens != 2*210 {
		t.Fatalf("rows b, c: %+v %+v", rows[1], rows[2])
	}
	if CompletionAllowance("medium", false) != 210 || CompletionAllowance("", true) != 130 {
		t.Fatal("completion allowance")
	}
}

func TestQuestionOfIsQuestionOfTheFields(t *testing.T) {
	values := []string{"", "  ", "NA", " NA\n", "N A", "A  trial\n\tof\u00a0therapy ", "Jørgensen", "\u2003x\u2003"}
	for _, title := range values {
		for _, abstract := range values {
			for _, valid := range []bool{true, false} {
				ft, bt := Field(title, valid)
				fa, ba := Field(abstract, true)
				want := Question(" Include?\n ", ft, fa)
				if got := QuestionOf(" Include?\n ", title, valid, abstract, true); got != want {
					t.Fatalf("%q %q: %q, want %q", title, abstract, got, want)
				}
				if IsBlank(title, valid) != bt || IsBlank(abstract, true) != ba {
					t.Fatalf("%q %q: blank differs", title, abstract)
				}
			}
		}
	}
}

func TestEstimateCountsCacheReadsAndWrites(t *testing.T) {
	in, cached, write, out := 0.10, 0.01, 0.125, 0.50
	long := string(make([]byte, 5400)) // 1,350 + 150 tokens of prompt and schema: one prompt of 1,500
	minB := 512.0
	model := func(reps float64) EstimateModel {
		return EstimateModel{Name: "m", Reps: reps, ModelPrices: ModelPrices{PriceIn: &in, PriceOut: &out,
			PriceCachedIn: &cached, PriceCacheWrite: &write}, CacheMinTokens: &minB}
	}
	cases := []struct {
		name          string
		prompt        string
		reps          float64
		cache         bool
		read, written float64
	}{
		{"caching off", long, 10, false, 0, 0},
		{"a long prompt, reps 1: read by the records after the first", long, 1, true, 999 * 1500, 1500},
		{"a long prompt, reps 10: the records' repetitions too", long, 10, true, 9999*1500 + 1000*9*100, 1500 + 1000*100},
		{"a prompt under the minimum, reps 10: the whole request per record", string(make([]byte, 1200)), 10, true,
			1000 * 9 * 550, 1000 * 550},
		{"a short request is not cached", "short", 10, true, 0, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rows := Estimate(EstimateInput{Prompts: []string{tc.prompt}, Records: 1000, RecordChars: 1000 * 400, TopPs: 1,
				Cache: tc.cache, Models: []EstimateModel{model(tc.reps)}})
			r := rows[0]
			if r.CachedTokens != tc.read || r.CacheWriteTokens != tc.written {
				t.Fatalf("read %v, written %v; want %v, %v", r.CachedTokens, r.CacheWriteTokens, tc.read, tc.written)
			}
			fresh := r.InputTokens - r.CachedTokens - r.CacheWriteTokens
			if want := (fresh*in + r.CachedTokens*cached + r.CacheWriteTokens*write + r.OutputTokens*out) / 1e6; *r.Price != want {
				t.Fatalf("price %v, want %v", *r.Price, want)
			}
		})
	}
}
