package provider

// Provider A: the OpenAI Chat Completions protocol (also served by Azure, Ollama, vLLM, llama.cpp
// and LM Studio). Request and response shapes follow CreateChatCompletionRequest and
// CreateChatCompletionResponse of OpenAI's OpenAPI document.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

var openAIDescriptor = Descriptor{
	Protocol: "openai", Letter: "a", Label: "provider A",
	DefaultURL: "https://api.openai.com/v1/chat/completions", DefaultModel: "gpt-6-luna",
	KeyVar: "PROVIDER_A_API_KEY", KeyFallbacks: []string{"OPENAI_API_KEY", "CHATGPT_KEY"},
	ToolFormat: "chat", ToolChoiceWords: []string{"auto", "none", "required"},
	Rate: RateHeaders{
		Requests: RateKind{Limit: []string{"x-ratelimit-limit-requests"}, Remaining: []string{"x-ratelimit-remaining-requests"},
			Reset: []string{"x-ratelimit-reset-requests"}},
		Tokens: RateKind{Limit: []string{"x-ratelimit-limit-tokens"}, Remaining: []string{"x-ratelimit-remaining-tokens"},
			Reset: []string{"x-ratelimit-reset-tokens"}},
		ResetFormat: "duration",
	},
	// "60,000 requests/minute may be enforced as 1,000 requests/second" (OpenAI's rate-limit guide).
	WindowedRequests: true,
	ModelFields:      []string{"reasoning_effort", "verbosity", "send_top_p", "price_in", "price_cached_in", "price_cache_write", "price_out"},
	SettingFields:    []string{"reasoning_effort", "verbosity", "send_top_p"},
	Policy:           openAIPolicy,
	Probe:            openAIProbe,
	Batch:            newOpenAIBatch,
}

func init() { registerChat(&openAIDescriptor, &openAIDialect) }

var openAIDialect = dialect{
	seedField:      "seed",
	sendVerbosity:  true,
	finishFailures: map[string]bool{"length": false, "content_filter": false},
	errorMessage:   openAIErrorMessage,
	retryFirst:     flexUnavailable,
}

// flexUnavailable is flex processing's 429 "resource unavailable": no capacity at the moment, not
// an exhausted quota, so it is retried with back-off (and not billed).
func flexUnavailable(r Response) bool {
	if r.Status != http.StatusTooManyRequests {
		return false
	}
	var e struct {
		Error *struct {
			Message string `json:"message"`
			Type    string `json:"type"`
			Code    any    `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal(r.Body, &e) != nil || e.Error == nil {
		return false
	}
	code, _ := e.Error.Code.(string)
	return code == "resource_unavailable" || e.Error.Type == "resource_unavailable" ||
		strings.Contains(strings.ToLower(e.Error.Message), "resource unavailable")
}

// openAIRule is a row of provider A's rules file.
type openAIRule struct {
	// ReasoningValues are the reasoning_effort values the model takes.
	ReasoningValues []string `json:"reasoning_values"`
	// ToolsNeedNone: the model calls function tools on Chat Completions only with effort "none".
	ToolsNeedNone         bool `json:"tools_need_none"`
	AcceptsReasoningField bool `json:"accepts_reasoning_field"`
	AcceptsVerbosity      bool `json:"accepts_verbosity"`
	TopPOK                bool `json:"top_p_ok"`
	// ForceClass is the model's class for the spec's guard on repetitions (openAIRepsLimit).
	ForceClass string `json:"force_class"`
}

// openAIRepsLimit is the spec's guard on repetitions, by force class: a larger model is screened
// once per record, an older small one at most 10 times, the default small one without a limit; a
// model without rules at most 10 times, as on the other providers.
var openAIRepsLimit = map[string]struct {
	limit int
	what  string
}{
	"small_default": {0, ""},
	"small_old":     {10, "an older small model, which is screened at most 10 times per record"},
	"large":         {1, "a larger model, which is screened once per record"},
	"":              {10, "a model without known rules (a custom model), which is screened at most 10 times per record"},
}

func openAIGuard(m PolicyModel, class string, force bool) error {
	g, ok := openAIRepsLimit[class]
	if !ok {
		return fmt.Errorf("model %q: unknown force class %q", m.Name, class)
	}
	if force || g.limit == 0 || m.Reps <= g.limit {
		return nil
	}
	return &ArgError{Classes: []string{"tabscreen_error_force"}, Arg: "reps", Bullets: []Bullet{
		{"", fmt.Sprintf("`reps`: %d repetitions of model %q are refused: it is %s.", m.Reps, m.Name, g.what)},
		{"i", "Set `force = TRUE` if you really mean it."}}}
}

// openAIProbe asks for at most 16 tokens, with the cheapest reasoning setting the model takes.
func openAIProbe(m PolicyModel) (any, error) {
	body := map[string]any{"model": m.Name, "messages": probeMessages, "max_completion_tokens": 16}
	if !m.hasRules() {
		return body, nil
	}
	var r openAIRule
	if err := DecodeRules(m, &r); err != nil {
		return nil, err
	}
	if r.AcceptsReasoningField {
		for _, e := range []string{"none", "minimal", "low"} {
			if slices.Contains(r.ReasoningValues, e) {
				body["reasoning_effort"] = e
				break
			}
		}
	}
	return body, nil
}

func openAIErrorMessage(status int, body []byte) string {
	var e struct {
		Error *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &e) == nil && e.Error != nil && e.Error.Message != "" {
		return fmt.Sprintf("HTTP %d: %s", status, e.Error.Message)
	}
	return fmt.Sprintf("HTTP %d: %s", status, snippet(body))
}

// openAIPolicy: recent reasoning models call tools on Chat Completions only with reasoning_effort
// "none" (an effort not given means the model's own, "none"; another explicit one is an error); models that are
// not reasoning models get neither reasoning_effort nor verbosity; top_p goes only to models that
// take it at their effort. A model without rules gets exactly what the user gave.
func openAIPolicy(m PolicyModel, a PolicyArgs) (ModelSettings, error) {
	if !m.hasRules() {
		return asGiven(a), openAIGuard(m, "", a.Force)
	}
	var r openAIRule
	if err := DecodeRules(m, &r); err != nil {
		return ModelSettings{}, err
	}
	s, err := openAISettings(m.Name, &r, a)
	if err != nil {
		return ModelSettings{}, err
	}
	return s, openAIGuard(m, r.ForceClass, a.Force)
}

func openAISettings(model string, r *openAIRule, a PolicyArgs) (ModelSettings, error) {
	effort, err := openAIEffort(model, r, a)
	if err != nil {
		return ModelSettings{}, err
	}
	s := ModelSettings{ReasoningEffort: effort, AllowanceEffort: effort}
	switch {
	case r.AcceptsVerbosity:
		s.Verbosity = str(a.Verbosity)
	case a.Given.Verbosity:
		return ModelSettings{}, argError("tabscreen_error_model_verbosity", "verbosity",
			fmt.Sprintf("Model %q does not take `verbosity`.", model),
			"Leave `verbosity` out, or use a model of the GPT-5 or GPT-6 families.")
	}
	topP := r.TopPOK && (effort == nil || *effort == "none")
	if !topP && !allOne(a.TopP) {
		with := ""
		if effort != nil {
			with = fmt.Sprintf(" with reasoning_effort %q", *effort)
		}
		return ModelSettings{}, topPNotTaken(model, with)
	}
	s.SendTopP = boolp(topP)
	return s, nil
}

func openAIEffort(model string, r *openAIRule, a PolicyArgs) (*string, error) {
	if !r.AcceptsReasoningField {
		if a.Given.ReasoningEffort {
			return nil, argError("tabscreen_error_model_reasoning", "reasoning_effort",
				fmt.Sprintf("Model %q is not a reasoning model and rejects the `reasoning_effort` field.", model),
				"Leave `reasoning_effort` out for this model, or screen it in a separate call.")
		}
		return nil, nil
	}
	values := r.ReasoningValues
	if r.ToolsNeedNone {
		if !slices.Contains(values, "none") {
			e := argError("tabscreen_error_model_tools", "model",
				fmt.Sprintf("Model %q cannot call function tools through the Chat Completions endpoint.", model))
			e.Bullets = append(e.Bullets,
				Bullet{"x", "With tools it needs `reasoning_effort = \"none\"`, which this model does not accept."},
				Bullet{"i", `Use a model that does, e.g. "gpt-6-luna" or "gpt-6.1-terra".`})
			return nil, e
		}
		if a.Given.ReasoningEffort && a.ReasoningEffort != "none" {
			return nil, argError("tabscreen_error_model_reasoning", "reasoning_effort",
				fmt.Sprintf("Model %q calls function tools on this endpoint only with `reasoning_effort = \"none\"`, not %q.", model, a.ReasoningEffort),
				"Leave `reasoning_effort` at its default or set it to \"none\".")
		}
		return str("none"), nil
	}
	if !slices.Contains(values, a.ReasoningEffort) {
		return nil, effortNotTaken(model, a.ReasoningEffort, values)
	}
	return str(a.ReasoningEffort), nil
}

// openAIBatch is OpenAI's Batch API: the lines are uploaded as a JSONL file (POST /v1/files,
// purpose "batch"), then POST /v1/batches; an ended batch has an output file and an error file
// (GET /v1/files/{id}/content). At most 50,000 requests and 200 MB per file.
type openAIBatch struct{ fileBatches }

func newOpenAIBatch(s Settings) BatchAPI { return &openAIBatch{newFileBatches(s, "/batches")} }

func (o *openAIBatch) Line(customID string, req Request) ([]byte, error) {
	return json.Marshal(map[string]any{"custom_id": customID, "method": "POST", "url": "/v1/chat/completions",
		"body": json.RawMessage(req.Body)})
}

func (o *openAIBatch) Create(fileID string, _ [][]byte, tag string) HTTPCall {
	return jsonCall(http.MethodPost, o.coll, o.header, map[string]any{"input_file_id": fileID,
		"endpoint": "/v1/chat/completions", "completion_window": "24h", "metadata": map[string]string{ClientTagKey: tag}})
}

type openAIBatchObject struct {
	ID            string        `json:"id"`
	Status        string        `json:"status"`
	OutputFileID  *string       `json:"output_file_id"`
	ErrorFileID   *string       `json:"error_file_id"`
	Metadata      batchMetadata `json:"metadata"`
	RequestCounts struct {
		Total     int `json:"total"`
		Completed int `json:"completed"`
		Failed    int `json:"failed"`
	} `json:"request_counts"`
}

func (b openAIBatchObject) info() BatchInfo {
	i := BatchInfo{ID: b.ID, Tag: b.Metadata.tag(), State: b.Status, Total: b.RequestCounts.Total,
		Done: b.RequestCounts.Completed, Fail: b.RequestCounts.Failed}
	switch b.Status {
	case "completed", "expired", "cancelled":
		i.Ended = true
	case "failed": // refused before running (invalid file, enqueued-token limit): sent again later
		i.Ended, i.Refused = true, true
	}
	i.Results = presentIDs(b.OutputFileID, b.ErrorFileID)
	return i
}

func (o *openAIBatch) ParseBatch(r Response) (BatchInfo, error) {
	return parseBatchObject[openAIBatchObject](r)
}

func (o *openAIBatch) List(after string) HTTPCall {
	q := url.Values{"limit": {"100"}}
	if after != "" {
		q.Set("after", after)
	}
	return o.list(q)
}

func (o *openAIBatch) ParseList(r Response, _ string) ([]BatchInfo, string, error) {
	return parseCursorPage[openAIBatchObject](r)
}
