package provider

// Provider B: the Anthropic Messages protocol. There is no published OpenAPI document; the shapes
// follow the official SDK's types (MessageCreateParams, Message, Usage). The call is a content
// block of type tool_use whose input is a JSON object; thinking blocks may come before it.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/tabscreen/tabscreen/golib/screen"
)

const (
	anthropicVersion   = "2023-06-01"
	anthropicPath      = "/v1/messages"
	defaultMaxTokensB  = 1024
	toolInstructionFmt = "Answer only by calling the function %s, exactly once."
)

var anthropicDescriptor = Descriptor{
	Protocol: "anthropic", Letter: "b", Label: "provider B",
	DefaultURL: "https://api.anthropic.com", DefaultModel: "claude-haiku-5-5", Path: anthropicPath,
	KeyVar: "PROVIDER_B_API_KEY", KeyFallbacks: []string{"ANTHROPIC_API_KEY"}, ToolFormat: "messages",
	Rate: RateHeaders{
		Requests: RateKind{Limit: []string{"anthropic-ratelimit-requests-limit"},
			Remaining: []string{"anthropic-ratelimit-requests-remaining"}, Reset: []string{"anthropic-ratelimit-requests-reset"}},
		// Where the server sends no combined token limit, the input-token one.
		Tokens: RateKind{Limit: []string{"anthropic-ratelimit-tokens-limit", "anthropic-ratelimit-input-tokens-limit"},
			Remaining: []string{"anthropic-ratelimit-tokens-remaining", "anthropic-ratelimit-input-tokens-remaining"},
			Reset:     []string{"anthropic-ratelimit-tokens-reset", "anthropic-ratelimit-input-tokens-reset"}},
		Others: []RateKind{{Remaining: []string{"anthropic-ratelimit-output-tokens-remaining"},
			Reset: []string{"anthropic-ratelimit-output-tokens-reset"}}},
		ResetFormat: "rfc3339",
	},
	ModelFields:   []string{"reasoning_effort", "thinking", "forced_tool", "price_in", "price_cached_in", "price_cache_write", "price_out"},
	SettingFields: []string{"reasoning_effort", "thinking", "forced_tool", "allowance_effort"},
	Policy:        anthropicPolicy,
	Probe: func(m PolicyModel) (any, error) {
		return map[string]any{"model": m.Name, "max_tokens": 16, "messages": probeMessages}, nil
	},
	CheckBody: anthropicSampling,
}

func init() {
	// Set here, not in the literal: the adapter reads its descriptor.
	anthropicDescriptor.New = newAnthropic
	anthropicDescriptor.Batch = newAnthropicBatch
	Register(anthropicDescriptor)
}

type anthropic struct {
	s         Settings
	url       string
	header    http.Header
	tools     []screen.Tool
	toolsJSON json.RawMessage
	builtin   bool
}

type anthropicTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema"`
	Strict      *bool           `json:"strict,omitempty"`
}

func newAnthropic(s Settings) (Adapter, error) {
	a := &anthropic{s: s, url: anthropicDescriptor.Endpoint(s.URL), header: http.Header{}}
	a.header.Set("x-api-key", s.APIKey)
	a.header.Set("anthropic-version", anthropicVersion)
	a.header.Set("content-type", "application/json")
	if !s.HasCustomTools() {
		strict := true
		a.builtin = true
		a.tools = []screen.Tool{s.Builtin}
		a.toolsJSON, _ = json.Marshal([]anthropicTool{{Name: s.Builtin.Name, Description: s.Builtin.Description,
			InputSchema: s.Builtin.Parameters, Strict: &strict}})
		return a, nil
	}
	raw, err := customToolList(s.CustomTools)
	if err != nil {
		return nil, err
	}
	for i, t := range raw {
		var tool anthropicTool
		b, _ := json.Marshal(t)
		if err := json.Unmarshal(b, &tool); err != nil || tool.Name == "" || len(tool.InputSchema) == 0 {
			return nil, fmt.Errorf("tool %d is not of the form list(name = ..., description = ..., input_schema = list(type = \"object\", ...))", i+1)
		}
		a.tools = append(a.tools, screen.Tool{Name: tool.Name, Description: tool.Description,
			Parameters: tool.InputSchema, Strict: tool.Strict != nil && *tool.Strict})
	}
	a.toolsJSON, _ = json.Marshal(raw)
	return a, nil
}

func (a *anthropic) Protocol() string { return anthropicDescriptor.Protocol }

// Request posts to the Messages path of the base URL, the key in x-api-key. The header is shared
// by every request of the run and never changed.
func (a *anthropic) Request(c *Call) (Request, error) {
	body, err := a.body(c)
	return Request{URL: a.url, Header: a.header, Body: body}, err
}

// body forces the built-in tool where the model allows it. A model that rejects forced tools
// gets tool_choice auto with an instruction in the top-level system field (the protocol has no
// system role); its replies without the call are failed attempts. The protocol has no seed.
func (a *anthropic) body(c *Call) ([]byte, error) {
	maxTokens := a.s.MaxTokens
	if maxTokens <= 0 {
		maxTokens = defaultMaxTokensB
	}
	system := ""
	if a.builtin && !c.Model.ForcedTool {
		system = fmt.Sprintf(toolInstructionFmt, a.s.Builtin.Name)
	}
	fields := []field{
		{"model", c.Model.Name},
		{"max_tokens", maxTokens},
		{"messages", []map[string]any{{"role": a.s.Role, "content": a.content(c, len(system))}}},
		{"tools", a.toolsJSON},
	}
	if a.builtin {
		choice := map[string]any{"type": "tool", "name": a.s.Builtin.Name, "disable_parallel_tool_use": true}
		if !c.Model.ForcedTool {
			choice = map[string]any{"type": "auto", "disable_parallel_tool_use": true}
			fields = append(fields, field{"system", system})
		}
		fields = append(fields, field{"tool_choice", choice})
	}
	if c.Model.Thinking != "" {
		fields = append(fields, field{"thinking", map[string]string{"type": c.Model.Thinking}})
	}
	if c.Model.ReasoningEffort != "" {
		fields = append(fields, field{"output_config", map[string]string{"effort": c.Model.ReasoningEffort}})
	}
	return buildBody(fields, a.s.ExtraBody)
}

type textBlock struct {
	Type         string        `json:"type"`
	Text         string        `json:"text"`
	CacheControl *cacheControl `json:"cache_control,omitempty"`
}

type cacheControl struct {
	Type string `json:"type"`
}

// content is the user message: the question as one string, or, when a cache breakpoint pays, the
// prompt and the record as two text blocks with a breakpoint after the prompt (its prefix of
// tools, system and prompt is shared by every record) and/or after the record (the whole request,
// shared by the record's repetitions). The cache reads the prefix in the order tools, system,
// messages; a breakpoint pays when its prefix reaches the model's minimum and at least two
// requests send it (cachePays). A write costs 1.25x input, a read 0.1x.
func (a *anthropic) content(c *Call, systemBytes int) any {
	if !a.s.Cache || c.PrefixLen <= 0 {
		return c.Question
	}
	shared := len(a.toolsJSON) + systemBytes
	atPrompt := cachePays(c.Model, shared+c.PrefixLen, c.PromptReuse)
	atRecord := cachePays(c.Model, shared+len(c.Question), c.RecordReuse)
	if !atPrompt && !atRecord {
		return c.Question
	}
	blocks := []textBlock{{Type: "text", Text: c.promptPart()}, {Type: "text", Text: c.recordPart()}}
	if atPrompt {
		blocks[0].CacheControl = &cacheControl{Type: "ephemeral"}
	}
	if atRecord {
		blocks[1].CacheControl = &cacheControl{Type: "ephemeral"}
	}
	return blocks
}

type anthropicResponse struct {
	Model      string `json:"model"`
	StopReason string `json:"stop_reason"`
	Content    []struct {
		Type  string          `json:"type"`
		Name  string          `json:"name"`
		Input json.RawMessage `json:"input"`
	} `json:"content"`
	Usage *struct {
		InputTokens              int64 `json:"input_tokens"`
		OutputTokens             int64 `json:"output_tokens"`
		CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
		CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
	} `json:"usage"`
}

// Parse selects content blocks by type, never by position. prompt_tokens is every input token,
// cache reads and writes included; each is priced at its own rate. Thinking tokens are already
// inside output_tokens.
func (a *anthropic) Parse(c *Call, r Response, now time.Time) Outcome {
	return retryWait(a.parse(c, r.Body), r, now)
}

func (a *anthropic) parse(c *Call, body []byte) Outcome {
	var r anthropicResponse
	if f := decodeResponse(body, &r); f != nil {
		return Outcome{Failure: f}
	}
	o := Outcome{Submodel: r.Model}
	if u := r.Usage; u != nil {
		o.Usage = screen.Usage{
			Prompt:     u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens,
			Cached:     u.CacheReadInputTokens,
			CacheWrite: u.CacheCreationInputTokens,
			Completion: u.OutputTokens,
		}
	}
	for _, block := range r.Content {
		if block.Type != "tool_use" {
			continue
		}
		if readCall(&o, a.tools, !a.builtin, block.Name, block.Input) {
			return o
		}
	}
	switch r.StopReason {
	case "max_tokens", "refusal", "model_context_window_exceeded", "pause_turn":
		o.Failure = reask(fmt.Errorf("the answer stopped with stop_reason %q before calling the tool", r.StopReason))
		return o
	}
	o.Failure = noCall(c.Model)
	return o
}

func anthropicErrorMessage(status int, body []byte) string {
	var e struct {
		Error *struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &e) == nil && e.Error != nil && e.Error.Message != "" {
		return fmt.Sprintf("HTTP %d: %s (%s)", status, e.Error.Message, e.Error.Type)
	}
	return fmt.Sprintf("HTTP %d: %s", status, snippet(body))
}

// Classify: besides a refused key or access, a billing error (402) and a 429 without retry-after
// (a monthly spend cap, not a rate limit) stop the run: no retry can succeed.
func (a *anthropic) Classify(r Response, now time.Time) Failure {
	msg := anthropicErrorMessage(r.Status, r.Body)
	switch {
	case r.Status == http.StatusPaymentRequired:
		return stopped("tabscreen_error_quota", "the account cannot be billed ("+msg+")")
	case r.Status == http.StatusTooManyRequests && r.Header.Get("retry-after") == "" && r.Header.Get("retry-after-ms") == "":
		return stopped("tabscreen_error_quota", "the account's spend limit is reached ("+msg+")")
	}
	if f, stop := bearerStop(r, msg); stop {
		return f
	}
	return classify(anthropicDescriptor.Rate, r, now, msg)
}

// RateState reads the RFC 3339 reset times of the allowances.
func (a *anthropic) RateState(h http.Header, now time.Time) RateState {
	return rateState(anthropicDescriptor.Rate, h, now)
}

// anthropicRule is a row of provider B's rules file.
type anthropicRule struct {
	// ReasoningValues are the output_config.effort values the model takes.
	ReasoningValues       []string `json:"reasoning_values"`
	AcceptsReasoningField bool     `json:"accepts_reasoning_field"`
	ThinkingDefaultOn     bool     `json:"thinking_default_on"`
	CanDisableThinking    bool     `json:"can_disable_thinking"`
	// ThinkingOffEfforts are the efforts at which thinking can be disabled.
	ThinkingOffEfforts []string `json:"thinking_off_efforts"`
	ForcedToolOK       bool     `json:"forced_tool_ok"`
	// SamplingOK: the model takes non-default sampling parameters (anthropicSampling).
	SamplingOK bool `json:"sampling_ok"`
}

// anthropicSampling checks the sampling parameters in `...`: the Claude 5 models reject any
// non-default value, and the older models take temperature or top_p, not both. Models without
// rules are sent what the user gave.
func anthropicSampling(models []PolicyModel, fields []string) error {
	var sampling []string
	for _, f := range []string{"temperature", "top_p", "top_k"} {
		if slices.Contains(fields, f) {
			sampling = append(sampling, f)
		}
	}
	if len(sampling) == 0 {
		return nil
	}
	var refuse []string
	known := false
	for _, m := range models {
		if !m.hasRules() {
			continue
		}
		var r anthropicRule
		if err := DecodeRules(m, &r); err != nil {
			return err
		}
		known = true
		if !r.SamplingOK {
			refuse = append(refuse, m.Name)
		}
	}
	class := []string{"tabscreen_error_model_sampling", "tabscreen_error_model"}
	if len(refuse) > 0 {
		verb, which := "rejects", "this model"
		if len(refuse) > 1 {
			verb, which = "reject", "these models"
		}
		fields := quoted(sampling, "and")
		return &ArgError{Classes: class, Arg: "...", Bullets: []Bullet{
			{"", fmt.Sprintf("%s %s non-default sampling parameters, so `...` must not set %s.", quoted(refuse, "and"), verb, fields)},
			{"i", fmt.Sprintf("Leave %s out for %s, or use \"claude-haiku-4-5\", which takes them.", fields, which)}}}
	}
	if known && slices.Contains(sampling, "temperature") && slices.Contains(sampling, "top_p") {
		return &ArgError{Classes: class, Arg: "...", Bullets: []Bullet{
			{"", "`...` sets both temperature and top_p."},
			{"i", "Provider B's models take one of them, not both."}}}
	}
	return nil
}

// anthropicPolicy chooses, per model, the request that yields exactly one tool call
// (providers.md 0.2):
//   - effort: output_config.effort. "none" (thinking off) is sent as "low", the least effort; a
//     model without the field (Haiku 4.5) gets none, and an explicit effort other than "none" is
//     an error; an explicit effort the model does not take is an error, the default is then left
//     out.
//   - thinking: "disabled" when the model can turn thinking off at that effort and either "none"
//     was asked or the built-in tool is forced; otherwise left out (the model's default).
//   - forced tool: the built-in tool is forced when the model accepts a forced tool choice and
//     thinking is off (forced tool use and thinking do not mix). Otherwise the model is asked to
//     call it (Body), and an answer without the call is retried.
//
// "none" for a model that cannot turn thinking off is an error. A model without rules gets only
// what was given: an effort other than "none" is sent, and then the tool is not forced (the model
// may think); "none" is sent as thinking "disabled".
func anthropicPolicy(m PolicyModel, a PolicyArgs) (ModelSettings, error) {
	given := a.Given.ReasoningEffort
	none := a.ReasoningEffort == "none"
	if !m.hasRules() {
		var s ModelSettings
		if given && !none {
			s.ReasoningEffort = str(a.ReasoningEffort)
		}
		if given && none {
			s.Thinking = str("disabled")
		}
		s.ForcedTool = boolp(a.Builtin && s.ReasoningEffort == nil)
		s.AllowanceEffort = s.ReasoningEffort
		return s, nil
	}
	var r anthropicRule
	if err := DecodeRules(m, &r); err != nil {
		return ModelSettings{}, err
	}
	values := r.ReasoningValues
	var effort *string
	switch {
	case !r.AcceptsReasoningField:
		if given && !none {
			return ModelSettings{}, argError("tabscreen_error_model_reasoning", "reasoning_effort",
				fmt.Sprintf("Model %q does not take a reasoning effort (output_config.effort).", m.Name),
				"Leave `reasoning_effort` out or set it to \"none\" for this model, or screen it in a separate call.")
		}
	case none:
		effort = str("low")
	case slices.Contains(values, a.ReasoningEffort):
		effort = str(a.ReasoningEffort)
	case given:
		takes := values
		if r.CanDisableThinking {
			takes = append([]string{"none"}, values...)
		}
		return ModelSettings{}, effortNotTaken(m.Name, a.ReasoningEffort, takes)
	}
	canOff := r.CanDisableThinking && (effort == nil || slices.Contains(r.ThinkingOffEfforts, *effort))
	if none && r.ThinkingDefaultOn && !canOff {
		return ModelSettings{}, argError("tabscreen_error_model_reasoning", "reasoning_effort",
			fmt.Sprintf("Model %q cannot turn thinking off, so it does not take `reasoning_effort = \"none\"`.", m.Name),
			`Use "low", the least effort, or a model that can, e.g. "claude-haiku-5-5".`)
	}
	wantForced := a.Builtin && r.ForcedToolOK
	s := ModelSettings{ReasoningEffort: effort}
	if canOff && (none || wantForced) {
		s.Thinking = str("disabled")
	}
	thinkingOff := s.Thinking != nil || !r.ThinkingDefaultOn
	s.ForcedTool = boolp(wantForced && thinkingOff)
	if !thinkingOff {
		s.AllowanceEffort = effort
		if effort == nil {
			s.AllowanceEffort = str("high")
		}
	}
	return s, nil
}

// anthropicBatch is the Message Batches API: the requests travel inline (POST
// /v1/messages/batches, at most 100,000 requests or 256 MB); an ended batch's results are one JSONL
// file (results_url). A batch has no metadata: the client tag cannot travel with it, so a batch
// whose create answer was lost is found by its request count and creation time (Matches).
type anthropicBatch struct {
	batchCollection // https://api.anthropic.com/v1/messages/batches
}

func newAnthropicBatch(s Settings) BatchAPI {
	h := http.Header{}
	h.Set("x-api-key", s.APIKey)
	h.Set("anthropic-version", anthropicVersion)
	h.Set("accept", "application/json")
	return &anthropicBatch{batchCollection{anthropicDescriptor.Endpoint(s.URL) + "/batches", h}}
}

func (a *anthropicBatch) Limits() BatchLimits {
	return BatchLimits{MaxLines: 100000, MaxBytes: 256 << 20}
}

func (a *anthropicBatch) Line(customID string, req Request) ([]byte, error) {
	return json.Marshal(map[string]any{"custom_id": customID, "params": json.RawMessage(req.Body)})
}

func (a *anthropicBatch) Upload([][]byte, string) (HTTPCall, bool) { return HTTPCall{}, false }

func (a *anthropicBatch) ParseUpload(Response) (string, error) { return "", nil }

func (a *anthropicBatch) Create(_ string, lines [][]byte, _ string) HTTPCall {
	body := append([]byte(`{"requests":[`), bytes.Join(lines, []byte(","))...)
	body = append(body, "]}"...)
	return jsonCall(http.MethodPost, a.coll, a.header, json.RawMessage(body))
}

type anthropicBatchObject struct {
	ID               string `json:"id"`
	ProcessingStatus string `json:"processing_status"`
	CreatedAt        string `json:"created_at"`
	ResultsURL       string `json:"results_url"`
	RequestCounts    struct {
		Processing int `json:"processing"`
		Succeeded  int `json:"succeeded"`
		Errored    int `json:"errored"`
		Canceled   int `json:"canceled"`
		Expired    int `json:"expired"`
	} `json:"request_counts"`
}

func (b anthropicBatchObject) info() BatchInfo {
	c := b.RequestCounts
	i := BatchInfo{ID: b.ID, State: b.ProcessingStatus, Ended: b.ProcessingStatus == "ended",
		Total: c.Processing + c.Succeeded + c.Errored + c.Canceled + c.Expired, Done: c.Succeeded, Fail: c.Errored}
	i.Created, _ = time.Parse(time.RFC3339, b.CreatedAt)
	if i.Ended && b.ResultsURL != "" {
		i.Results = []string{b.ResultsURL}
	}
	return i
}

func (a *anthropicBatch) ParseBatch(r Response) (BatchInfo, error) {
	return parseBatchObject[anthropicBatchObject](r)
}

func (a *anthropicBatch) List(after string) HTTPCall {
	q := url.Values{"limit": {"100"}}
	if after != "" {
		q.Set("after_id", after)
	}
	return a.list(q)
}

func (a *anthropicBatch) ParseList(r Response, _ string) ([]BatchInfo, string, error) {
	return parseCursorPage[anthropicBatchObject](r)
}

func (a *anthropicBatch) Results(b BatchInfo) []HTTPCall {
	out := make([]HTTPCall, len(b.Results))
	for i, u := range b.Results {
		out[i] = jsonCall(http.MethodGet, u, a.header, nil)
	}
	return out
}

// anthropicErrorStatus is the HTTP status of an error type, for an errored line's result.
var anthropicErrorStatus = map[string]int{"invalid_request_error": 400, "authentication_error": 401,
	"permission_error": 403, "not_found_error": 404, "request_too_large": 413, "rate_limit_error": 429,
	"api_error": 500, "overloaded_error": 529}

// ParseResults: succeeded lines hold their Message, errored ones an error response (read with the
// HTTP status its type stands for), canceled and expired ones nothing; a result of another type
// failed.
func (a *anthropicBatch) ParseResults(body []byte) []BatchLine {
	return resultLines(body, func(f map[string]json.RawMessage) BatchLine {
		res := jsonObject(f["result"])
		switch kind := jsonText(res["type"]); kind {
		case "succeeded":
			return BatchLine{Kind: LineResponse, Status: http.StatusOK, Body: res["message"]}
		case "errored":
			// An ErrorResponse ({"type": "error", "error": {...}}), or its inner error alone.
			e := jsonObject(res["error"])
			if inner := jsonObject(e["error"]); inner != nil {
				e = inner
			}
			errType := jsonText(e["type"])
			line := BatchLine{Kind: LineFailed, Body: res["error"], Message: joinText("errored", errType, jsonText(e["message"]))}
			if st, ok := anthropicErrorStatus[errType]; ok {
				line.Kind, line.Status = LineResponse, st
			}
			return line
		case "canceled", "expired":
			return BatchLine{Kind: LineExpired, Message: kind}
		case "":
			return BatchLine{Kind: LineFailed, Message: "a result without a type"}
		default:
			return BatchLine{Kind: LineFailed, Message: fmt.Sprintf("a result of unknown type %q", kind)}
		}
	})
}
