// Package provider turns provider-neutral calls into one wire protocol and back. Everything that
// differs between providers (URL, headers, body, parsing, rate-limit headers, which failures stop a
// run) lives in one small file per provider behind Adapter; the engine owns every loop, wait and
// retry.
package provider

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/tabscreen/tabscreen/golib/screen"
)

// Model is one model of a run with the request settings its rules allow.
type Model struct {
	Name string
	// ReasoningEffort and Verbosity are sent only when not empty.
	ReasoningEffort string
	Verbosity       string
	// SendTopP is false for models that reject sampling parameters.
	SendTopP bool
	// Thinking is provider B's thinking type ("disabled", "adaptive"), sent when not empty.
	Thinking string
	// ForcedTool is false for models that reject a forced tool choice: they are asked with
	// tool_choice auto and an instruction, and a reply without the call is a failed attempt.
	ForcedTool bool
	// CacheMinTokens is the shortest prefix the provider caches for this model (its rules), 0 when
	// unknown; the adapter then assumes defaultCacheMinTokens.
	CacheMinTokens int
}

// defaultCacheMinTokens is the cache minimum assumed for a model without rules.
const defaultCacheMinTokens = 1024

// Call is one request: one question to one model.
//
// The question starts with the prompt (its first PrefixLen bytes), shared by every record of the
// prompt; the record follows. PromptReuse counts the requests of the run that send this prompt to
// this model, RecordReuse those that send this whole question (the repetitions and top_p values
// of a record): the adapter decides from them whether marking a prefix for the provider's cache
// pays. CacheKey names the prompt for providers that route by a cache key.

type Call struct {
	Model       *Model
	Question    string
	TopP        float64
	HasTopP     bool
	Seed        int64
	HasSeed     bool
	PrefixLen   int
	PromptReuse int
	RecordReuse int
	CacheKey    string
}

// promptPart and recordPart split the question after its prompt; the record part loses the blank
// line that joined the two.
func (c *Call) promptPart() string {
	if c.PrefixLen <= 0 || c.PrefixLen > len(c.Question) {
		return ""
	}
	return c.Question[:c.PrefixLen]
}

func (c *Call) recordPart() string {
	if c.PrefixLen <= 0 || c.PrefixLen > len(c.Question) {
		return c.Question
	}
	return strings.TrimLeft(c.Question[c.PrefixLen:], "\n")
}

// cacheTokens is the rough token count of a prefix of that many bytes (about four per token, as
// the price estimate counts).
func cacheTokens(bytes int) int { return bytes / 4 }

// cachePays tells whether marking a prefix for the cache pays: it is long enough to be cached
// for the model, and at least two requests send it (a write costs more than plain input; a
// single read makes up for it).
func cachePays(m *Model, prefixBytes, reuse int) bool {
	minTokens := m.CacheMinTokens
	if minTokens <= 0 {
		minTokens = defaultCacheMinTokens
	}
	return reuse >= 2 && cacheTokens(prefixBytes) >= minTokens
}

// Settings are the request settings shared by every call of a run.
type Settings struct {
	URL  string
	Role string
	// Builtin is the built-in tool, used when CustomTools is empty.
	Builtin screen.Tool
	// CustomTools is the user's tool list in the protocol's own shape, sent as given.
	CustomTools json.RawMessage
	// ToolChoice is the user's tool_choice, or null.
	ToolChoice json.RawMessage
	// ExtraBody holds the fields passed through the R function's `...`; they override ours.
	ExtraBody map[string]json.RawMessage
	MaxTokens int
	// Cache: lay requests out for the provider's prompt cache (breakpoints, cache keys). False
	// with options(tabscreen.cache = FALSE).
	Cache bool
	// APIKey goes into the headers of every request; it is never written anywhere else.
	APIKey string
}

// Request is the HTTP request of one call: always a POST of a JSON body.
type Request struct {
	URL    string
	Header http.Header
	Body   []byte
}

// Response is an HTTP response as the adapter reads it.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// Verdict is what a failed attempt means for its job and its run.
type Verdict uint8

const (
	// Retry: a passing failure; try again (after Wait when HasWait), within max_tries.
	Retry Verdict = iota + 1
	// Reask: a reply without a usable decision; ask again at once, on the small re-ask budget.
	Reask
	// FailJob: this job cannot succeed; the run goes on.
	FailJob
	// StopRun: no request of the run can succeed (a refused key, an exhausted quota).
	StopRun
)

// Failure is a failed attempt, classified by the adapter.
type Failure struct {
	Verdict Verdict
	// Class names the error of a stopped run (tabscreen_error_auth, tabscreen_error_quota).
	Class   string
	Message string
	// Wait is how long the response asks to wait before the next attempt (Retry-After, or the
	// reset of an exhausted rate limit); Pause says the wait holds the whole run (a 429).
	Wait    time.Duration
	HasWait bool
	Pause   bool
	// Err is the cause of a failure read from a 200 reply (ErrNoToolCall, *FailedAttempt, ...).
	Err error
}

func (f *Failure) Error() string { return f.Message }
func (f *Failure) Unwrap() error { return f.Err }

// Outcome is what a 200 reply gives: a decision, or the failure it means. Usage is what the reply
// was billed, also when it is unusable.
type Outcome struct {
	Decision screen.Decision
	Usage    screen.Usage
	Submodel string
	Failure  *Failure
}

// Err is the outcome's failure as an error, or nil.
func (o Outcome) Err() error {
	if o.Failure == nil {
		return nil
	}
	return o.Failure
}

// Adapter is one wire protocol, per call and pure: it builds requests and reads responses, and
// never does I/O or reads a clock. The engine owns every loop, wait and retry.
type Adapter interface {
	// Protocol names the wire protocol.
	Protocol() string
	// Request is the HTTP request of one call, the key in its headers.
	Request(c *Call) (Request, error)
	// Parse reads a 200 reply to a call, received at now.
	Parse(c *Call, r Response, now time.Time) Outcome
	// Classify decides what an error response, received at now, means.
	Classify(r Response, now time.Time) Failure
	// RateState reads the rate-limit headers of a response received at now.
	RateState(h http.Header, now time.Time) RateState
}

// RateState is what a response's rate-limit headers say: the allowances, and how long to wait for
// an exhausted one to reset.
type RateState struct {
	Info    RateInfo
	Wait    time.Duration
	HasWait bool
}

// Stop describes a failure after which no request of the run can succeed (a refused key, an
// exhausted quota): the engine stops the whole run instead of failing every job one by one.
type Stop struct {
	Class   string
	Message string
	// Hint, when set, says what the user can do about it.
	Hint string
	// Status is the HTTP status of the response that stopped the run (0 when none did): R adds
	// the classes of that status to the error, so that callers can catch it by status.
	Status int
}

// New returns the adapter of a registered provider, named by its letter or its protocol.
func New(name string, s Settings) (Adapter, error) {
	d, ok := Lookup(name)
	if !ok {
		return nil, fmt.Errorf("unknown provider %q", name)
	}
	return d.New(s)
}

// probeMessages is the question of the smallest request (rate_limits_per_minute()).
var probeMessages = []map[string]string{{"role": "user", "content": "Reply with OK."}}

// buildBody writes fields in order, each value through json.Marshal, and lets the user's extra
// fields override ours. A json.RawMessage (the tools and the tool choice, marshalled once per run,
// and extra_body) is written as it is.
func buildBody(fields []field, extra map[string]json.RawMessage) ([]byte, error) {
	buf := []byte{'{'}
	key := func(k string) {
		if len(buf) > 1 {
			buf = append(buf, ',')
		}
		kb, _ := json.Marshal(k)
		buf = append(buf, kb...)
		buf = append(buf, ':')
	}
	for _, f := range fields {
		key(f.key)
		if v, ok := extra[f.key]; ok {
			buf = append(buf, v...)
			continue
		}
		if raw, ok := f.value.(json.RawMessage); ok {
			buf = append(buf, raw...)
			continue
		}
		v, err := json.Marshal(f.value)
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", f.key, err)
		}
		buf = append(buf, v...)
	}
	for k, v := range extra {
		if !slices.ContainsFunc(fields, func(f field) bool { return f.key == k }) {
			key(k)
			buf = append(buf, v...)
		}
	}
	return append(buf, '}'), nil
}

type field struct {
	key   string
	value any
}

// findTool returns the tool of that name.
func findTool(tools []screen.Tool, name string) *screen.Tool {
	for i := range tools {
		if tools[i].Name == name {
			return &tools[i]
		}
	}
	return nil
}

// HasCustomTools tells whether the run sends the user's tools rather than the built-in one.
func (s Settings) HasCustomTools() bool {
	return len(s.CustomTools) > 0 && string(s.CustomTools) != "null"
}

// customToolList reads the user's tools, with their schemas made valid JSON Schema.
func customToolList(raw json.RawMessage) ([]map[string]any, error) {
	var tools []map[string]any
	if err := json.Unmarshal(raw, &tools); err != nil {
		return nil, fmt.Errorf("tools must be a list of tool definitions: %v", err)
	}
	for _, t := range tools {
		normaliseSchema(t)
	}
	return tools, nil
}

// readCall reads a call of one of the run's tools into the outcome; found is false when the call
// names no tool of the run. With custom tools every argument is kept, as the model wrote it.
func readCall(o *Outcome, tools []screen.Tool, custom bool, name string, rawArgs json.RawMessage) (found bool) {
	tool := findTool(tools, name)
	if tool == nil {
		return false
	}
	args, object, err := decodeArguments(rawArgs, custom)
	if err == nil {
		o.Decision, err = screen.ReadDecision(args, tool)
	}
	if err != nil {
		o.Failure = reask(err)
		return true
	}
	if custom {
		o.Decision.Arguments = string(object)
	}
	return true
}

// retryWait gives a reply that is retried the wait its headers ask for, as an error response's.
func retryWait(o Outcome, r Response, now time.Time) Outcome {
	if o.Failure != nil && o.Failure.Verdict == Retry {
		o.Failure.Wait, o.Failure.HasWait = RetryAfter(r.Header, now)
	}
	return o
}

// reask is a reply without a usable decision: worth asking again at once.
func reask(err error) *Failure { return &Failure{Verdict: Reask, Message: err.Error(), Err: err} }

// noCall is a reply without a call of the run's tools: asked again, or, for a model that is asked
// rather than forced to call, a failed attempt retried within max_tries.
func noCall(m *Model) *Failure {
	f := reask(ErrNoToolCall)
	if m != nil && !m.ForcedTool {
		f.Verdict = Retry
	}
	return f
}

// decodeArguments reads tool arguments that arrive either as a JSON string (OpenAI, usually
// Mistral) or as a JSON object (Anthropic, sometimes Mistral), and returns them also as the JSON
// object's text, compacted, when text is true (custom tools keep it; the built-in tool does not,
// and compacting text that has just been decoded cannot fail, so leaving it out changes nothing
// else).
func decodeArguments(raw json.RawMessage, text bool) (map[string]any, json.RawMessage, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		raw = json.RawMessage(s)
	}
	var args map[string]any
	if err := json.Unmarshal(raw, &args); err != nil {
		return nil, nil, fmt.Errorf("the tool arguments are not valid JSON: %v", err)
	}
	if args == nil {
		return nil, nil, fmt.Errorf("the tool arguments are not a JSON object")
	}
	if !text {
		return args, nil, nil
	}
	var object bytes.Buffer
	if err := json.Compact(&object, raw); err != nil {
		return nil, nil, fmt.Errorf("the tool arguments are not valid JSON: %v", err)
	}
	return args, object.Bytes(), nil
}

// normaliseSchema wraps the scalar values that R's auto-unboxing makes of one-element `required`
// and `enum` vectors back into arrays, so that a custom tool written in R is a valid JSON Schema.
func normaliseSchema(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, child := range x {
			if (k == "required" || k == "enum") && !isArray(child) {
				x[k] = []any{child}
				continue
			}
			x[k] = normaliseSchema(child)
		}
		return x
	case []any:
		for i := range x {
			x[i] = normaliseSchema(x[i])
		}
		return x
	default:
		return v
	}
}

func isArray(v any) bool { _, ok := v.([]any); return ok }
