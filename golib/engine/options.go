// Package engine runs a screening: it expands records into jobs, paces and bounds the requests,
// retries what is transient, stops the run on failures no retry can fix, and accounts for every
// job, answered or failed.
package engine

import (
	"encoding/json"
	"fmt"
	"net/url"

	"github.com/tabscreen/tabscreen/golib/provider"
	"github.com/tabscreen/tabscreen/golib/screen"
)

// Options are the run options R sends as JSON (ARCHITECTURE.md, "Tables and run options").
type Options struct {
	Provider   string                     `json:"provider"`
	APIURL     string                     `json:"api_url"`
	Prompts    []string                   `json:"prompts"`
	Models     []ModelOptions             `json:"models"`
	RPM        *float64                   `json:"rpm"`
	TPM        *float64                   `json:"tpm,omitempty"` // option tabscreen.tpm; null: the provider's reported limit
	TopP       []float64                  `json:"top_p"`
	Role       string                     `json:"role"`
	Tools      json.RawMessage            `json:"tools"`
	ToolChoice json.RawMessage            `json:"tool_choice"`
	Builtin    BuiltinOptions             `json:"builtin"`
	ExtraBody  map[string]json.RawMessage `json:"extra_body"`
	Seed       *int64                     `json:"seed"`
	MaxTries   *int                       `json:"max_tries"`
	MaxSeconds *float64                   `json:"max_seconds"`
	Callbacks  CallbackOptions            `json:"r_callbacks"`
	MaxActive  int                        `json:"max_active"`
	Timeout    float64                    `json:"timeout_seconds"`
	MaxTokens  int                        `json:"max_tokens"`
	Jobs       []JobKey                   `json:"jobs"`
	Store      *StoreOptions              `json:"store"`
	Result     *ResultOptions             `json:"result"`
	// Cache lays requests out for the providers' prompt caches and sends a record's repetitions
	// once its first answer has arrived; null means true.
	Cache *bool `json:"cache"`
	// CacheMinTokens is, by model (in the order of Models), the shortest prefix the provider
	// caches (min_cache_tokens of the rules table; null: not known).
	CacheMinTokens []*int `json:"cache_min_tokens"`
	// Batch sends the jobs through the provider's batch API (nil: one request per job).
	Batch *BatchOptions `json:"batch,omitempty"`
	// Adaptive asks each group's repetitions one after another (with Batch: in rounds) until its
	// verdict is settled (adaptive.go, adaptive_batch.go; nil: every repetition). Part of the
	// fingerprint: an adaptive run and a full one are different runs.
	Adaptive *AdaptiveOptions `json:"adaptive,omitempty"`
}

// BatchOptions shape a batch screening. Only its presence is part of the fingerprint: wait is
// how this call waits, not what the run asks.
type BatchOptions struct {
	// Wait: poll until every batch has ended; false returns once the jobs are submitted.
	Wait bool `json:"wait,omitempty"`
	// PollSeconds is the first wait between polls (0: the default, a quarter second).
	PollSeconds float64 `json:"poll_seconds,omitempty"`
}

// caching tells whether the run uses the providers' prompt caches.
func (o *Options) caching() bool { return o.Cache == nil || *o.Cache }

// ResultOptions shape the result tables: the aggregation of spec section 3, and what a call that
// repairs an earlier result (screen_errors()) merges into it.
type ResultOptions struct {
	Aggregate bool     `json:"aggregate"`
	Upper     *float64 `json:"incl_cutoff_upper"`
	Lower     *float64 `json:"incl_cutoff_lower"`
	// Repairs is the result a call repairs (screen_errors()), nil otherwise.
	Repairs *Repaired `json:"repairs"`
}

// Repaired is what the engine merges of the result a call repairs besides its answered rows: the
// call's spend, time and rows are added to these, so that R merges nothing itself.
type Repaired struct {
	Price          []PriceRow `json:"price"`
	ElapsedSeconds float64    `json:"elapsed_seconds"`
	RunDate        string     `json:"run_date"`
	// SavedRequests are the requests adaptive repetitions did not send in the repaired result.
	SavedRequests int64 `json:"saved_requests"`
}

// ModelOptions are one model's settings, from the rules table on the R side.
type ModelOptions struct {
	Name            string  `json:"name"`
	Reps            int     `json:"reps"`
	RPM             float64 `json:"rpm"`
	ReasoningEffort *string `json:"reasoning_effort"`
	Verbosity       *string `json:"verbosity"`
	SendTopP        *bool   `json:"send_top_p"`
	Thinking        *string `json:"thinking"`
	ForcedTool      *bool   `json:"forced_tool"`
	screen.ModelPrices
}

// BuiltinOptions choose the built-in tool.
type BuiltinOptions struct {
	Overinclusive       bool `json:"overinclusive"`
	DecisionDescription bool `json:"decision_description"`
	Confidence          bool `json:"confidence"`
}

// CallbackOptions say which policies are user R functions, evaluated by R's poll loop.
type CallbackOptions struct {
	IsTransient bool `json:"is_transient"`
	Backoff     bool `json:"backoff"`
	After       bool `json:"after"`
}

// JobKey names one job, to re-run only some (screen_errors()), with the tokens it was billed by
// the earlier calls, which stay in its token columns.
type JobKey struct {
	Record           int32    `json:"record"`
	PromptID         int32    `json:"promptid"`
	Model            string   `json:"model"`
	TopP             *float64 `json:"top_p"`
	N                int32    `json:"n"`
	PromptTokens     *int64   `json:"prompt_tokens"`
	CompletionTokens *int64   `json:"completion_tokens"`
}

// NewOptions are the options before R's document is read into them: the defaults of the fields
// it may leave out.
func NewOptions() *Options { return &Options{Role: "user", Timeout: DefaultTimeout} }

// DefaultTimeout is a request's timeout in seconds when the options leave it out; R always sends
// options(tabscreen.timeout), whose default is the same.
const DefaultTimeout = 120

// Check checks the options read into NewOptions(). R has validated the user's arguments already;
// these checks guard the contract between the two sides.
func (o *Options) Check() error {
	if u, err := url.Parse(o.APIURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("api_url %q is not an http(s) URL", o.APIURL)
	}
	if len(o.Prompts) == 0 {
		return fmt.Errorf("no prompt")
	}
	if len(o.Models) == 0 {
		return fmt.Errorf("no model")
	}
	for _, m := range o.Models {
		if m.Name == "" || m.Reps < 1 || m.RPM <= 0 {
			return fmt.Errorf("model %q needs a name, reps >= 1 and rpm > 0", m.Name)
		}
	}
	if o.TPM != nil && !(*o.TPM > 0) {
		return fmt.Errorf("tpm must be above 0")
	}
	if o.MaxTries != nil && *o.MaxTries < 1 {
		return fmt.Errorf("max_tries must be at least 1")
	}
	if !(o.Timeout > 0) {
		return fmt.Errorf("timeout_seconds must be above 0")
	}
	return o.Adaptive.check()
}

func (o *Options) settings() provider.Settings {
	return provider.Settings{
		URL:         o.APIURL,
		Role:        o.Role,
		Builtin:     screen.BuiltinTool(o.Builtin.Overinclusive, o.Builtin.DecisionDescription, o.Builtin.Confidence),
		CustomTools: o.Tools,
		ToolChoice:  o.ToolChoice,
		ExtraBody:   o.ExtraBody,
		MaxTokens:   o.MaxTokens,
		Cache:       o.caching(),
	}
}

func (m ModelOptions) model() *provider.Model {
	pm := &provider.Model{Name: m.Name, SendTopP: m.SendTopP == nil || *m.SendTopP,
		ForcedTool: m.ForcedTool == nil || *m.ForcedTool}
	if m.Thinking != nil {
		pm.Thinking = *m.Thinking
	}
	if m.ReasoningEffort != nil {
		pm.ReasoningEffort = *m.ReasoningEffort
	}
	if m.Verbosity != nil {
		pm.Verbosity = *m.Verbosity
	}
	return pm
}

// estimator starts from the price estimate's completion allowance of the model's answers.
func (m ModelOptions) estimator(description bool) *estimator {
	effort := ""
	if m.ReasoningEffort != nil {
		effort = *m.ReasoningEffort
	}
	return &estimator{allowance: screen.CompletionAllowance(effort, description)}
}

func (m ModelOptions) prices() screen.Prices { return m.Prices(false) }

// batchPrices are the prices of the model's batch lines.
func (m ModelOptions) batchPrices() screen.Prices { return m.Prices(true) }
