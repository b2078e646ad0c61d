package provider

// Provider C: Mistral's chat completions (ChatCompletionRequest / ChatCompletionResponse of its
// OpenAPI document). The request schema is closed: a field the protocol does not define is a 422,
// so the dialect sends only Mistral's own names (random_seed, no verbosity).

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"
)

var mistralDescriptor = Descriptor{
	Protocol: "mistral", Letter: "c", Label: "provider C",
	DefaultURL: "https://api.mistral.ai/v1/chat/completions", DefaultModel: "mistral-small-latest",
	KeyVar: "PROVIDER_C_API_KEY", KeyFallbacks: []string{"MISTRAL_API_KEY"},
	ToolFormat: "chat", ToolChoiceWords: []string{"auto", "none", "any", "required"},
	// ChatCompletionRequest of Mistral's OpenAPI document is closed (additionalProperties: false).
	RequestFields: []string{"model", "temperature", "top_p", "max_tokens", "stream", "stop", "random_seed", "metadata",
		"messages", "response_format", "tools", "tool_choice", "presence_penalty", "frequency_penalty",
		"n", "prediction", "parallel_tool_calls", "reasoning_effort", "prompt_mode", "guardrails",
		"prompt_cache_key", "service_tier", "safe_prompt"},
	// Observed, not documented; Mistral sends no reset header (its 429s carry Retry-After).
	Rate: RateHeaders{
		Requests: RateKind{Limit: []string{"x-ratelimit-limit-req-minute"}, Remaining: []string{"x-ratelimit-remaining-req-minute"}},
		Tokens:   RateKind{Limit: []string{"x-ratelimit-limit-tokens-minute"}, Remaining: []string{"x-ratelimit-remaining-tokens-minute"}},
	},
	// Mistral's request limits are per second.
	WindowedRequests: true,
	ModelFields:      []string{"reasoning_effort", "send_top_p", "price_in", "price_cached_in", "price_out"},
	SettingFields:    []string{"reasoning_effort", "send_top_p"},
	Policy:           mistralPolicy,
	Batch:            newMistralBatch,
	Probe: func(m PolicyModel) (any, error) {
		return map[string]any{"model": m.Name, "messages": probeMessages, "max_tokens": 16}, nil
	},
}

func init() { registerChat(&mistralDescriptor, &mistralDialect) }

var mistralDialect = dialect{
	seedField:     "random_seed",
	sendVerbosity: false,
	// "error" is a failure on Mistral's side, worth another attempt; the others cannot improve.
	finishFailures: map[string]bool{"error": true, "length": false, "model_length": false},
	errorMessage:   mistralErrorMessage,
}

// mistralErrorMessage reads the shapes Mistral's errors come in: {"message": "..."} or
// {"message": {"detail": [...]}}, and FastAPI's {"detail": [{"loc": [...], "msg": "..."}]}.
func mistralErrorMessage(status int, body []byte) string {
	var e struct {
		Message json.RawMessage `json:"message"`
		Detail  json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(body, &e) != nil {
		return fmt.Sprintf("HTTP %d: %s", status, snippet(body))
	}
	var text string
	if json.Unmarshal(e.Message, &text) == nil && text != "" {
		return fmt.Sprintf("HTTP %d: %s", status, text)
	}
	detail := e.Detail
	if len(detail) == 0 {
		var inner struct {
			Detail json.RawMessage `json:"detail"`
		}
		if json.Unmarshal(e.Message, &inner) == nil {
			detail = inner.Detail
		}
	}
	var items []struct {
		Loc []any  `json:"loc"`
		Msg string `json:"msg"`
	}
	if json.Unmarshal(detail, &items) == nil && len(items) > 0 {
		return fmt.Sprintf("HTTP %d: %s (%v)", status, items[0].Msg, items[0].Loc)
	}
	return fmt.Sprintf("HTTP %d: %s", status, snippet(body))
}

// mistralRule is a row of provider C's rules file.
type mistralRule struct {
	ReasoningValues       []string `json:"reasoning_values"`
	AcceptsReasoningField bool     `json:"accepts_reasoning_field"`
	TopPOK                bool     `json:"top_p_ok"`
}

// mistralPolicy: reasoning_effort goes only to models whose rules take the field, since the others
// may answer 422 (for them "none" is left out and "high" is an error); top_p goes to every known
// model, to a model without rules only when given.
func mistralPolicy(m PolicyModel, a PolicyArgs) (ModelSettings, error) {
	if !m.hasRules() {
		return asGiven(a), nil
	}
	var r mistralRule
	if err := DecodeRules(m, &r); err != nil {
		return ModelSettings{}, err
	}
	var effort *string
	switch {
	case r.AcceptsReasoningField:
		values := r.ReasoningValues
		if !slices.Contains(values, a.ReasoningEffort) {
			return ModelSettings{}, effortNotTaken(m.Name, a.ReasoningEffort, values)
		}
		effort = str(a.ReasoningEffort)
	case a.ReasoningEffort != "none":
		return ModelSettings{}, argError("tabscreen_error_model_reasoning", "reasoning_effort",
			fmt.Sprintf("Model %q does not reason and is not sent `reasoning_effort`, so it cannot take %q.", m.Name, a.ReasoningEffort),
			`Leave `+"`reasoning_effort`"+` at "none" for this model, or use a reasoning model such as "mistral-small-latest".`)
	}
	if !r.TopPOK && !allOne(a.TopP) {
		return ModelSettings{}, topPNotTaken(m.Name, "")
	}
	return ModelSettings{ReasoningEffort: effort, AllowanceEffort: effort, SendTopP: boolp(r.TopPOK)}, nil
}

// mistralBatch is Mistral's batch jobs API: the lines are uploaded as a JSONL file (POST /v1/files,
// purpose "batch"), then POST /v1/batch/jobs with the client tag in its metadata; an ended job has
// an output file and an error file in OpenAI's line format. Inline requests stop at 10,000; a file
// holds up to a million pending requests, kept here to OpenAI's size so a file stays small.
type mistralBatch struct{ fileBatches }

func newMistralBatch(s Settings) BatchAPI { return &mistralBatch{newFileBatches(s, "/batch/jobs")} }

func (m *mistralBatch) Line(customID string, req Request) ([]byte, error) {
	return json.Marshal(map[string]any{"custom_id": customID, "body": json.RawMessage(req.Body)})
}

func (m *mistralBatch) Create(fileID string, _ [][]byte, tag string) HTTPCall {
	return jsonCall(http.MethodPost, m.coll, m.header, map[string]any{"input_files": []string{fileID},
		"endpoint": "/v1/chat/completions", "metadata": map[string]string{ClientTagKey: tag}, "timeout_hours": 24})
}

type mistralBatchJob struct {
	ID         string        `json:"id"`
	Status     string        `json:"status"`
	OutputFile *string       `json:"output_file"`
	ErrorFile  *string       `json:"error_file"`
	Metadata   batchMetadata `json:"metadata"`
	CreatedAt  int64         `json:"created_at"`
	Total      int           `json:"total_requests"`
	Succeeded  int           `json:"succeeded_requests"`
	Failed     int           `json:"failed_requests"`
}

func (b mistralBatchJob) info() BatchInfo {
	i := BatchInfo{ID: b.ID, Tag: b.Metadata.tag(), State: b.Status, Total: b.Total, Done: b.Succeeded,
		Fail: b.Failed, Created: time.Unix(b.CreatedAt, 0).UTC()}
	switch b.Status {
	case "SUCCESS", "FAILED", "TIMEOUT_EXCEEDED", "CANCELLED":
		i.Ended = true
	}
	i.Results = presentIDs(b.OutputFile, b.ErrorFile)
	return i
}

func (m *mistralBatch) ParseBatch(r Response) (BatchInfo, error) {
	return parseBatchObject[mistralBatchJob](r)
}

// List pages by number: the cursor is the page to ask for.
func (m *mistralBatch) List(after string) HTTPCall {
	if after == "" {
		after = "0"
	}
	q := url.Values{"page": {after}, "page_size": {"100"}, "order_by": {"-created"}}
	return m.list(q)
}

func (m *mistralBatch) ParseList(r Response, after string) ([]BatchInfo, string, error) {
	var page struct {
		Data  []mistralBatchJob `json:"data"`
		Total int               `json:"total"`
	}
	out, err := parseBatchPage(r, &page.Data, &page)
	if err != nil {
		return nil, "", err
	}
	// The next page follows from the one asked for and the count.
	n, _ := strconv.Atoi(after)
	if len(page.Data) == 0 || (n+1)*100 >= page.Total {
		return out, "", nil
	}
	return out, strconv.Itoa(n + 1), nil
}
