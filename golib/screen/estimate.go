package screen

import (
	"encoding/json"
	"unicode/utf8"
)

// FieldChars is the length, in characters, of a title or abstract as the price estimate counts it:
// a blank field is sent as NoInformation; white space is counted as it is (an estimate needs no
// exact count).
func FieldChars(s string, valid bool) (chars int, blank bool) {
	if blank = IsBlank(s, valid); blank {
		return utf8.RuneCountInString(NoInformation), true
	}
	return utf8.RuneCountInString(s), false
}

// reasoningAllowance is a rough count of the reasoning tokens an effort buys per answer.
var reasoningAllowance = map[string]float64{"none": 0, "minimal": 20, "low": 60, "medium": 200, "high": 480, "xhigh": 1000, "max": 2000}

// CompletionAllowance is a rough count of the completion tokens of one answer: about 10 for the
// decision, 120 more with a description, plus the reasoning the effort buys ("" for a model that
// does not reason).
func CompletionAllowance(effort string, description bool) float64 {
	n := 10 + reasoningAllowance[effort]
	if description {
		n += 120
	}
	return n
}

// CharsPerToken and RequestTokens are the rule for a request's input tokens before it is sent:
// about one token per four characters, and, where only the prompt and the record are known (the
// price estimate), about 150 tokens of tool schema and framing besides. The price estimate and the
// engine's token pacing (which counts a request's whole body) both count by it.
const (
	CharsPerToken = 4
	RequestTokens = 150
)

// CharTokens is the rule's count of tokens in chars characters.
func CharTokens(chars int) float64 { return float64(chars) / CharsPerToken }

// EstimateInput is what the pre-run price estimate needs of a screening.
type EstimateInput struct {
	Prompts     []string        `json:"prompts"`
	Records     int             `json:"records"`
	RecordChars float64         `json:"record_chars"` // titles and abstracts, as FieldChars counts them
	TopPs       int             `json:"top_p_values"`
	Description bool            `json:"decision_description"`
	Models      []EstimateModel `json:"models"`
	// Cache: the run uses the providers' prompt caches (options(tabscreen.cache)).
	Cache bool `json:"cache"`
	// Batch: the run goes through the providers' batch APIs, at their batch prices.
	Batch bool `json:"batch"`
}

// EstimateModel is one model of the estimate.
type EstimateModel struct {
	Name string  `json:"name"`
	Reps float64 `json:"reps"`
	// The prices (a cache price null: the input price).
	ModelPrices
	// The model's minimum cacheable prefix (null: DefaultCacheMinTokens).
	CacheMinTokens *float64 `json:"cache_min_tokens"`
	// Settings are the model's request settings (provider.ModelSettings): its allowance_effort,
	// where the settings have that field, else its reasoning_effort sizes the reasoning of its
	// answers (null: none).
	Settings map[string]json.RawMessage `json:"settings"`
}

func (m EstimateModel) effort() string {
	v, ok := m.Settings["allowance_effort"]
	if !ok {
		v = m.Settings["reasoning_effort"]
	}
	var e string
	_ = json.Unmarshal(v, &e)
	return e
}

// EstimateRow is one model's estimate; Price is nil when a price is unknown.
type EstimateRow struct {
	Model        string  `json:"model"`
	Requests     float64 `json:"requests"`
	InputTokens  float64 `json:"input_tokens"`
	OutputTokens float64 `json:"output_tokens"`
	// CachedTokens and CacheWriteTokens are the part of InputTokens expected to be read from and
	// written to the prompt cache.
	CachedTokens     float64  `json:"cached_tokens"`
	CacheWriteTokens float64  `json:"cache_write_tokens"`
	Price            *float64 `json:"price"`
}

// DefaultCacheMinTokens is the shortest prefix a provider caches when the model's is not known.
const DefaultCacheMinTokens = 1024

// cacheCounts are a model's expected cache reads and writes. A prompt's prefix (tool schema and
// prompt, promptTokens) that reaches the model's minimum is written by the run's first request and
// read by every later one; a record's whole request that reaches it is written by the record's
// first request and read by its other repetitions and top_p values (perRecord requests in all).
// Providers without a write price bill writes as input.
func cacheCounts(m EstimateModel, promptTokens []float64, records, recordTokens, perRecord float64) (read, written float64) {
	minTokens := float64(DefaultCacheMinTokens)
	if m.CacheMinTokens != nil {
		minTokens = *m.CacheMinTokens
	}
	for _, p := range promptTokens {
		requests := records * perRecord
		promptCached := p >= minTokens && requests >= 2
		if perRecord >= 2 && p+recordTokens >= minTokens {
			part := recordTokens // the prompt's part is counted below when it is cached alone
			if !promptCached {
				part += p
			}
			read += records * (perRecord - 1) * part
			written += records * part
		}
		if promptCached {
			read += (requests - 1) * p
			written += p
		}
	}
	return read, written
}

// Estimate is the pre-run price estimate: input tokens about one per four characters of prompt
// and record, plus about 150 tokens of tool schema and framing per request; output tokens from
// CompletionAllowance.
func Estimate(in EstimateInput) []EstimateRow {
	prompts, n := float64(len(in.Prompts)), float64(in.Records)
	promptChars := 0.0
	for _, p := range in.Prompts {
		promptChars += float64(utf8.RuneCountInString(p))
	}
	perPromptChars := promptChars*n + prompts*in.RecordChars
	rows := make([]EstimateRow, len(in.Models))
	for i, m := range in.Models {
		reps := float64(in.TopPs) * m.Reps
		effort := m.effort()
		r := EstimateRow{Model: m.Name, Requests: prompts * n * reps,
			InputTokens: (perPromptChars/CharsPerToken + RequestTokens*prompts*n) * reps}
		r.OutputTokens = r.Requests * CompletionAllowance(effort, in.Description)
		if in.Cache && n > 0 {
			promptTokens := make([]float64, len(in.Prompts))
			for p, text := range in.Prompts {
				promptTokens[p] = float64(utf8.RuneCountInString(text))/4 + 150
			}
			r.CachedTokens, r.CacheWriteTokens = cacheCounts(m, promptTokens, n, in.RecordChars/n/4, reps)
		}
		if prices := m.Prices(in.Batch); prices.HasIn && prices.HasOut {
			cachedRate, writeRate := prices.cacheRates()
			fresh := r.InputTokens - r.CachedTokens - r.CacheWriteTokens
			p := (fresh*prices.In + r.CachedTokens*cachedRate + r.CacheWriteTokens*writeRate + r.OutputTokens*prices.Out) / 1e6
			r.Price = &p
		}
		rows[i] = r
	}
	return rows
}
