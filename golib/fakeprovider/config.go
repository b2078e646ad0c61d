package fakeprovider

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
)

// Fault kinds, as used in Config.Faults, FailFirstN.Kind and FailMatching.Kind.
const (
	FaultRateLimit = "429"       // 429 rate_limit_exceeded with Retry-After
	FaultQuota     = "quota"     // 429 insufficient_quota, no Retry-After
	Fault500       = "500"       // 500 server_error
	Fault502       = "502"       // 502 from the edge, an HTML page
	Fault503       = "503"       // 503 overloaded
	Fault504       = "504"       // 504 gateway timeout
	FaultHang      = "hang"      // never answers; ends when the client gives up or the server stops
	FaultDrop      = "drop"      // TCP connection closed without a response
	FaultMalformed = "malformed" // 200 with a truncated JSON body
	FaultNoTool    = "no_tool"   // 200 with a text answer and no tool call
	FaultBadArgs   = "bad_args"  // 200 with tool arguments that are not valid JSON
	FaultBadEnum   = "bad_enum"  // 200 with a value outside the tool schema's enum
	// Kinds of one protocol; the others give the nearest common kind instead (see protocolFault).
	Fault529         = "529"          // Anthropic: 529 overloaded_error with retry-after (elsewhere: 503)
	FaultFinishError = "finish_error" // Mistral: 200 with finish_reason "error" (elsewhere: 500)
)

// faultKinds lists every fault kind in a fixed order (the index is used for counters).
var faultKinds = []string{
	FaultRateLimit, FaultQuota, Fault500, Fault502, Fault503, Fault504,
	FaultHang, FaultDrop, FaultMalformed, FaultNoTool, FaultBadArgs, FaultBadEnum,
	Fault529, FaultFinishError, // appended: the draws of the kinds above keep their order
}

func faultIndex(kind string) int {
	for i, k := range faultKinds {
		if k == kind {
			return i
		}
	}
	return -1
}

// Config is the fake's behaviour. Every field can be given at start (flags or
// --config JSON) and changed at run time with POST /_fake/config, whose JSON
// object replaces the fields it names and leaves the others as they are.
type Config struct {
	// LatencyMS is a fixed delay before every answer to a valid request
	// (errors included, except 400/401 and refusals by the limits).
	LatencyMS float64 `json:"latency_ms"`
	// LatencyMedianMS > 0 adds a lognormal delay with this median and
	// LatencySigma (the standard deviation of its logarithm).
	LatencyMedianMS float64 `json:"latency_median_ms"`
	LatencySigma    float64 `json:"latency_sigma"`

	// RPM > 0 limits admitted requests to floor(RPM/60) in any sliding
	// one-second window (for RPM < 60: one in any 60/RPM seconds); others get
	// 429 rate_limit_exceeded with Retry-After.
	RPM float64 `json:"rpm"`
	// MaxConcurrency > 0 refuses (429) a request that arrives while that many
	// are being served.
	MaxConcurrency int `json:"max_concurrency"`

	// Faults maps a fault kind to its probability per valid request (sum <= 1).
	Faults WeightMap `json:"faults"`
	// FailFirstN gives the next N valid requests the fault Kind (counted from
	// the moment it is configured).
	FailFirstN *FailFirstN `json:"fail_first_n"`
	// FailMatching gives the fault Kind to every valid request whose user
	// message contains Substring (the first matching rule wins), or only to the
	// first N such requests when N > 0.
	FailMatching FailMatchingList `json:"fail_matching"`

	// Decisions weights enum values when the fake fills tool arguments, e.g.
	// {"1": 0.3, "0": 0.6, "1.1": 0.1}; applies to every enum property that
	// holds at least one of these values (the others get weight 0 there);
	// other enums are drawn uniformly.
	Decisions WeightMap `json:"decisions"`
	// Tendency, when on, gives each record an include probability that its answers follow,
	// instead of Decisions' weights for the decision (tendency.go); off by default.
	Tendency Tendency `json:"tendency"`
	// Seed enters every pseudo-random draw (faults, latency, answers).
	Seed int64 `json:"seed"`

	// InvalidKeys are API keys answered with 401 invalid_api_key.
	InvalidKeys StringList `json:"invalid_keys"`
	// RetryAfterMS is the delay advertised by injected 429s and concurrency refusals.
	RetryAfterMS int `json:"retry_after_ms"`
	// Snapshot is appended to the requested model name in answers
	// ("gpt-6-luna" -> "gpt-6-luna-2026-09-22"); "" appends nothing.
	Snapshot string `json:"snapshot"`
	// TPM > 0 limits the tokens counted per minute (a request's prompt tokens
	// when it is admitted, its completion tokens when it is answered, as the
	// answers' usage reports them) with a token bucket of TPM tokens refilled
	// continuously; a request whose prompt the bucket does not hold gets 429
	// with Retry-After. 0: no limit (headers report a limit no client reaches).
	TPM int64 `json:"tpm"`
	// TPMMode is how the tpm limit counts: "bucket" (the default, above), "window" (at most TPM
	// in any sliding minute; a request whose prompt does not fit is refused unless the minute
	// counted nothing) or "second" (the bucket above holding only TPM/60, one second's tokens). In
	// the last two the headers report the limit less the tokens counted in the last minute.
	TPMMode string `json:"tpm_mode"`
	// ReasoningTokens are added to every answer's completion tokens.
	ReasoningTokens int `json:"reasoning_tokens"`
	// CachedFraction of the prompt tokens is reported as cached (instead of the prompt cache).
	CachedFraction float64 `json:"cached_fraction"`
	// PromptCache reports cached (and, for Anthropic, cache-write) tokens as each provider's cache
	// would (cache.go). Off by default, so that every prompt token is priced alike.
	PromptCache bool `json:"prompt_cache"`
	// FlexUnavailableN answers the next N OpenAI requests with service_tier "flex" with flex
	// processing's 429 "resource unavailable".
	FlexUnavailableN int `json:"flex_unavailable_n"`
	// AllowUnknownFields accepts top-level request fields the specification
	// does not define (the real service rejects them).
	AllowUnknownFields bool `json:"allow_unknown_fields"`
	// KeepRequests is how many recent requests GET /_fake/requests can return.
	KeepRequests int `json:"keep_requests"`
	// CountBodies counts the requests and answers of each distinct request body (stats "bodies").
	CountBodies bool `json:"count_bodies"`

	// Provider B (Anthropic Messages): per-model rules the service enforces,
	// as lists of substrings of the model name (case-insensitive).
	// AnthropicThinkingByDefault: models that think when "thinking" is absent.
	AnthropicThinkingByDefault StringList `json:"anthropic_thinking_by_default"`
	// AnthropicNoForcedTool: models that reject tool_choice "any" and "tool" outright.
	AnthropicNoForcedTool StringList `json:"anthropic_no_forced_tool"`
	// AnthropicNoDisableThinking: models that reject thinking {"type": "disabled"}.
	AnthropicNoDisableThinking StringList `json:"anthropic_no_disable_thinking"`
	// AnthropicNoPrefill: models that reject a final assistant message (prefill).
	AnthropicNoPrefill StringList `json:"anthropic_no_prefill"`

	// Provider C (Mistral chat completions).
	// MistralNoReasoningEffort: model name prefixes that reject reasoning_effort (422).
	MistralNoReasoningEffort StringList `json:"mistral_no_reasoning_effort"`
	// MistralArgsAsObject sends tool arguments as a JSON object instead of a
	// JSON string (the schema allows both).
	MistralArgsAsObject bool `json:"mistral_args_as_object"`

	// Batches serves the batch APIs (off by default: their paths are then unknown, as before).
	Batches bool `json:"batches"`
	// BatchDelayMS: a batch ends this long after it was created (0: at once).
	BatchDelayMS float64 `json:"batch_delay_ms"`
	// Fractions of the lines seen for the first time that fail with a 500 response (BatchFail),
	// fail without a response (status_code 0 in OpenAI's error file; BatchFailZero), expire
	// (BatchExpire), or are missing from every result file (BatchVanish). A line sent again is
	// answered.
	BatchFail     float64 `json:"batch_fail"`
	BatchFailZero float64 `json:"batch_fail_zero"`
	BatchExpire   float64 `json:"batch_expire"`
	BatchVanish   float64 `json:"batch_vanish"`
	// Fractions of the lines seen for the first time that fail with a 500 response whose error
	// holds a numeric code, as Mistral's error files were seen to (BatchFailNumeric; Anthropic: an
	// errored result holding the inner error alone), or that are answered and written to the
	// result file cut in the middle, not JSON (BatchGarbled).
	BatchFailNumeric float64 `json:"batch_fail_numeric"`
	BatchGarbled     float64 `json:"batch_garbled"`
	// BatchUnknownFields adds fields no client knows (and null ones) to every result line and
	// batch object, and a numeric value to Mistral's batch metadata.
	BatchUnknownFields bool `json:"batch_unknown_fields"`
	// BatchResultsGone answers every request for a batch's results (OpenAI's and Mistral's file
	// contents, Anthropic's results) with a 404, as when they were deleted.
	BatchResultsGone bool `json:"batch_results_gone"`
	// BatchCreateFailOnce: the next batch create is refused once with a 429;
	// BatchCreateFailAlways: every batch create is.
	BatchCreateFailOnce   bool `json:"batch_create_fail_once"`
	BatchCreateFailAlways bool `json:"batch_create_fail_always"`
}

// FailFirstN scripts the fault Kind for the next N valid requests.
type FailFirstN struct {
	Kind string `json:"kind"`
	N    int    `json:"n"`
}

// FailMatching scripts the fault Kind for requests whose user message
// contains Substring (all of them when N is 0, else the first N).
type FailMatching struct {
	Substring string `json:"substring"`
	Kind      string `json:"kind"`
	N         int    `json:"n,omitempty"`
}

// DefaultConfig returns the configuration used when nothing is set.
func DefaultConfig() Config {
	return Config{
		RetryAfterMS: 1000,
		Snapshot:     "2026-09-22",
		KeepRequests: 100,
		TPMMode:      TPMBucket,

		AnthropicThinkingByDefault: StringList{"haiku-5", "sonnet-5", "opus-5", "opus-4-7", "fable", "mythos"},
		AnthropicNoForcedTool:      StringList{"opus-5-5", "sonnet-5-5", "fable"},
		AnthropicNoDisableThinking: StringList{"opus-5-5", "sonnet-5-5", "opus-4-7", "fable", "mythos"},
		AnthropicNoPrefill:         StringList{"5-5"},
		MistralNoReasoningEffort:   StringList{"ministral", "mistral-large"},
	}
}

// Merge returns c with the fields named in the JSON object patch replaced.
// Unknown fields are an error. null sets a field to its zero value.
func (c Config) Merge(patch []byte) (Config, error) {
	var p map[string]json.RawMessage
	if err := json.Unmarshal(patch, &p); err != nil || p == nil {
		return c, errors.New("configuration must be a JSON object")
	}
	curJSON, err := json.Marshal(c)
	if err != nil {
		return c, err
	}
	var cur map[string]json.RawMessage
	if err := json.Unmarshal(curJSON, &cur); err != nil {
		return c, err
	}
	var unknown []string
	for k, v := range p {
		if _, ok := cur[k]; !ok {
			unknown = append(unknown, k)
			continue
		}
		cur[k] = v
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return c, fmt.Errorf("unknown configuration field(s): %s", strings.Join(unknown, ", "))
	}
	merged, err := json.Marshal(cur)
	if err != nil {
		return c, err
	}
	var out Config
	dec := json.NewDecoder(bytes.NewReader(merged))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&out); err != nil {
		return c, fmt.Errorf("invalid configuration: %w", err)
	}
	if err := out.Validate(); err != nil {
		return c, err
	}
	return out, nil
}

// Validate checks ranges and fault kinds.
func (c Config) Validate() error {
	var errs []string
	bad := func(format string, a ...any) { errs = append(errs, fmt.Sprintf(format, a...)) }
	finite := func(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
	if !finite(c.LatencyMS) || c.LatencyMS < 0 {
		bad("latency_ms must be >= 0")
	}
	if !finite(c.LatencyMedianMS) || c.LatencyMedianMS < 0 {
		bad("latency_median_ms must be >= 0")
	}
	if !finite(c.LatencySigma) || c.LatencySigma < 0 {
		bad("latency_sigma must be >= 0")
	}
	if !finite(c.RPM) || c.RPM < 0 {
		bad("rpm must be >= 0")
	}
	if c.MaxConcurrency < 0 {
		bad("max_concurrency must be >= 0")
	}
	sum := 0.0
	for k, p := range c.Faults {
		if faultIndex(k) < 0 {
			bad("faults: unknown kind %q (known: %s)", k, strings.Join(faultKinds, ", "))
		}
		if !finite(p) || p < 0 || p > 1 {
			bad("faults: probability of %q must be in [0, 1]", k)
		}
		sum += p
	}
	if sum > 1+1e-9 {
		bad("faults: probabilities add up to %g > 1", sum)
	}
	if f := c.FailFirstN; f != nil {
		if faultIndex(f.Kind) < 0 {
			bad("fail_first_n: unknown kind %q", f.Kind)
		}
		if f.N < 0 {
			bad("fail_first_n: n must be >= 0")
		}
	}
	for i, m := range c.FailMatching {
		if m.Substring == "" {
			bad("fail_matching[%d]: substring must not be empty", i)
		}
		if faultIndex(m.Kind) < 0 {
			bad("fail_matching[%d]: unknown kind %q", i, m.Kind)
		}
		if m.N < 0 {
			bad("fail_matching[%d]: n must be >= 0", i)
		}
	}
	for k, w := range c.Decisions {
		if !finite(w) || w < 0 {
			bad("decisions: weight of %q must be >= 0", k)
		}
	}
	c.Tendency.validate(bad)
	batchSum := 0.0
	for _, p := range []float64{c.BatchFail, c.BatchFailZero, c.BatchExpire, c.BatchVanish, c.BatchFailNumeric, c.BatchGarbled} {
		if !finite(p) || p < 0 || p > 1 {
			bad("batch_fail, batch_fail_zero, batch_expire, batch_vanish, batch_fail_numeric and batch_garbled must be in [0, 1]")
		}
		batchSum += p
	}
	if batchSum > 1+1e-9 || !finite(c.BatchDelayMS) || c.BatchDelayMS < 0 {
		bad("the batch fractions must add up to at most 1, and batch_delay_ms must be >= 0")
	}
	if c.RetryAfterMS < 0 {
		bad("retry_after_ms must be >= 0")
	}
	if c.TPM < 0 {
		bad("tpm must be >= 0")
	}
	switch c.TPMMode {
	case "", TPMBucket, TPMWindow, TPMSecond:
	default:
		bad("tpm_mode must be %q, %q or %q", TPMBucket, TPMWindow, TPMSecond)
	}
	if c.ReasoningTokens < 0 {
		bad("reasoning_tokens must be >= 0")
	}
	if c.FlexUnavailableN < 0 {
		bad("flex_unavailable_n must be at least 0")
	}
	if !finite(c.CachedFraction) || c.CachedFraction < 0 || c.CachedFraction > 1 {
		bad("cached_fraction must be in [0, 1]")
	}
	if c.KeepRequests < 0 || c.KeepRequests > 100000 {
		bad("keep_requests must be in [0, 100000]")
	}
	for name, l := range map[string]StringList{
		"anthropic_thinking_by_default": c.AnthropicThinkingByDefault,
		"anthropic_no_forced_tool":      c.AnthropicNoForcedTool,
		"anthropic_no_disable_thinking": c.AnthropicNoDisableThinking,
		"anthropic_no_prefill":          c.AnthropicNoPrefill,
		"mistral_no_reasoning_effort":   c.MistralNoReasoningEffort,
	} {
		for _, x := range l {
			if strings.TrimSpace(x) == "" {
				bad("%s: model name patterns must not be empty", name)
				break
			}
		}
	}
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "; "))
	}
	return nil
}

// WeightMap is a map from a string to a weight. It also accepts an empty JSON
// array (what R's jsonlite writes for an empty named list).
type WeightMap map[string]float64

// UnmarshalJSON implements json.Unmarshaler.
func (m *WeightMap) UnmarshalJSON(b []byte) error {
	if t := bytes.TrimSpace(b); bytes.Equal(t, []byte("[]")) || bytes.Equal(t, []byte("null")) {
		*m = nil
		return nil
	}
	var x map[string]float64
	if err := json.Unmarshal(b, &x); err != nil {
		return err
	}
	*m = x
	return nil
}

// StringList is a list of strings that also accepts a single JSON string.
type StringList []string

// UnmarshalJSON implements json.Unmarshaler.
func (l *StringList) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*l = StringList{s}
		return nil
	}
	var x []string
	if err := json.Unmarshal(b, &x); err != nil {
		return err
	}
	*l = x
	return nil
}

// FailMatchingList is a list of rules that also accepts a single JSON object.
type FailMatchingList []FailMatching

// UnmarshalJSON implements json.Unmarshaler.
func (l *FailMatchingList) UnmarshalJSON(b []byte) error {
	t := bytes.TrimSpace(b)
	if len(t) > 0 && t[0] == '{' {
		var one FailMatching
		if err := strictUnmarshal(t, &one); err != nil {
			return err
		}
		*l = FailMatchingList{one}
		return nil
	}
	var x []FailMatching
	if err := strictUnmarshal(t, &x); err != nil {
		return err
	}
	*l = x
	return nil
}

// UnmarshalJSON implements json.Unmarshaler (unknown fields are errors).
func (f *FailFirstN) UnmarshalJSON(b []byte) error {
	type plain FailFirstN
	var x plain
	if err := strictUnmarshal(b, &x); err != nil {
		return err
	}
	*f = FailFirstN(x)
	return nil
}

func strictUnmarshal(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}
