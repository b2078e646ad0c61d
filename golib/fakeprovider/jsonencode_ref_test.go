package fakeprovider

// The answers' structures and their encoding by encoding/json as the protocols had them before
// the answers were appended by hand (jsonencode.go): the reference the new encoders must equal.

import (
	"encoding/json"
	"fmt"
	"strings"
)

type oaResponse struct {
	ID                string     `json:"id"`
	Object            string     `json:"object"`
	Created           int64      `json:"created"`
	Model             string     `json:"model"`
	Choices           []oaChoice `json:"choices"`
	Usage             oaUsage    `json:"usage"`
	ServiceTier       string     `json:"service_tier"`
	SystemFingerprint string     `json:"system_fingerprint"`
}

type oaChoice struct {
	Index        int       `json:"index"`
	Message      oaMessage `json:"message"`
	Logprobs     *struct{} `json:"logprobs"` // always null
	FinishReason string    `json:"finish_reason"`
}

type oaMessage struct {
	Role        string       `json:"role"`
	Content     *string      `json:"content"`
	Refusal     *string      `json:"refusal"`
	ToolCalls   []oaToolCall `json:"tool_calls,omitempty"`
	Annotations []struct{}   `json:"annotations"`
}

type oaToolCall struct {
	ID       string         `json:"id"`
	Type     string         `json:"type"`
	Function oaFunctionCall `json:"function"`
}

type oaFunctionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type oaUsage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	TotalTokens         int `json:"total_tokens"`
	PromptTokensDetails struct {
		CachedTokens int `json:"cached_tokens"`
		AudioTokens  int `json:"audio_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails struct {
		ReasoningTokens          int `json:"reasoning_tokens"`
		AudioTokens              int `json:"audio_tokens"`
		AcceptedPredictionTokens int `json:"accepted_prediction_tokens"`
		RejectedPredictionTokens int `json:"rejected_prediction_tokens"`
	} `json:"completion_tokens_details"`
}

func refOpenAIAnswer(req *chatRequest, a *answer) []byte {
	resp := oaResponse{
		ID:                "chatcmpl-" + a.id,
		Object:            "chat.completion",
		Created:           a.created,
		Model:             a.model,
		ServiceTier:       "default",
		SystemFingerprint: "fp_" + strings.ToLower(a.id[:10]),
	}
	n := max(req.choices, 1)
	for i := 0; i < n; i++ {
		msg := oaMessage{Role: "assistant", Annotations: []struct{}{}}
		finish := "stop"
		if i < len(a.args) {
			msg.ToolCalls = []oaToolCall{{ID: a.callIDs[i], Type: "function",
				Function: oaFunctionCall{Name: req.tool.name, Arguments: a.args[i]}}}
			if !req.forced { // a named tool_choice ends with "stop", as the service does
				finish = "tool_calls"
			}
		} else {
			text := a.text
			msg.Content = &text
		}
		resp.Choices = append(resp.Choices, oaChoice{Index: i, Message: msg, FinishReason: finish})
	}
	u := &resp.Usage
	u.PromptTokens, u.CompletionTokens = a.promptTokens, a.completionTokens
	u.TotalTokens = a.promptTokens + a.completionTokens
	u.PromptTokensDetails.CachedTokens = a.cachedTokens
	u.CompletionTokensDetails.ReasoningTokens = a.reasoningTokens

	b, _ := json.Marshal(resp)
	return b
}

type anthMessage struct {
	ID           string          `json:"id"`
	Type         string          `json:"type"`
	Role         string          `json:"role"`
	Model        string          `json:"model"`
	Content      []anthBlock     `json:"content"`
	StopReason   string          `json:"stop_reason"`
	StopSequence *string         `json:"stop_sequence"`
	Usage        anthUsage       `json:"usage"`
	Container    json.RawMessage `json:"container"`
}

// anthBlock is a response content block (fields by type).
type anthBlock struct {
	Type      string          `json:"type"`
	Thinking  *string         `json:"thinking,omitempty"`
	Signature string          `json:"signature,omitempty"`
	Text      *string         `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
}

type anthUsage struct {
	InputTokens              int `json:"input_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
	CacheCreation            struct {
		Ephemeral5m int `json:"ephemeral_5m_input_tokens"`
		Ephemeral1h int `json:"ephemeral_1h_input_tokens"`
	} `json:"cache_creation"`
	OutputTokens int    `json:"output_tokens"`
	ServiceTier  string `json:"service_tier"`
}

func refAnthropicAnswer(req *chatRequest, ans *answer) []byte {
	resp := anthMessage{
		ID:        "msg_01" + ans.id[:24],
		Type:      "message",
		Role:      "assistant",
		Model:     req.model,
		Container: json.RawMessage("null"),
	}
	if req.thinking { // empty thinking text (display omitted), with a signature
		empty := ""
		resp.Content = append(resp.Content, anthBlock{Type: "thinking", Thinking: &empty,
			Signature: "EqQB" + randomID("", 64, hashString(ans.id))})
	}
	if len(ans.args) > 0 {
		input := json.RawMessage(ans.args[0])
		if ans.fault == FaultBadArgs || !json.Valid(input) {
			// input is always an object; the failure is one without the
			// arguments the schema requires
			input = json.RawMessage("{}")
		}
		resp.Content = append(resp.Content, anthBlock{Type: "tool_use",
			ID: "toolu_01" + strings.TrimPrefix(ans.callIDs[0], "call_"), Name: req.tool.name, Input: input})
		resp.StopReason = "tool_use"
	} else {
		text := ans.text
		resp.Content = append(resp.Content, anthBlock{Type: "text", Text: &text})
		resp.StopReason = "end_turn"
	}
	u := &resp.Usage
	u.InputTokens = ans.promptTokens - ans.cachedTokens - ans.cacheWriteTokens
	u.CacheReadInputTokens = ans.cachedTokens
	u.CacheCreationInputTokens = ans.cacheWriteTokens
	u.CacheCreation.Ephemeral5m = ans.cacheWriteTokens
	u.OutputTokens = ans.completionTokens
	u.ServiceTier = "standard"

	b, _ := json.Marshal(resp)
	return b
}

type miResponse struct {
	ID      string     `json:"id"`
	Object  string     `json:"object"`
	Created int64      `json:"created"`
	Model   string     `json:"model"`
	Choices []miChoice `json:"choices"`
	Usage   miUsage    `json:"usage"`
}

type miChoice struct {
	Index        int       `json:"index"`
	Message      miMessage `json:"message"`
	FinishReason string    `json:"finish_reason"`
}

type miMessage struct {
	Role      string       `json:"role"`
	Content   any          `json:"content"`
	ToolCalls []miToolCall `json:"tool_calls"`
	Prefix    bool         `json:"prefix"`
}

type miToolCall struct {
	ID       string         `json:"id"`
	Type     string         `json:"type"`
	Function miFunctionCall `json:"function"`
	Index    int            `json:"index"`
}

type miFunctionCall struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

type miUsage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
	// PromptTokensDetails is sent only when a prompt_cache_key request read the cache: the chat
	// schema's UsageInfo does not define it, Mistral's answers carry it (providers.md 3.3).
	PromptTokensDetails *miTokenDetails `json:"prompt_tokens_details,omitempty"`
}

type miTokenDetails struct {
	CachedTokens int `json:"cached_tokens"`
}

func refMistralAnswer(req *chatRequest, a *answer) []byte {
	h1 := hashString(a.id)
	resp := miResponse{
		ID:      fmt.Sprintf("%016x%016x", h1, mix64(h1)),
		Object:  "chat.completion",
		Created: a.created,
		Model:   req.model, // the alias as requested
	}
	n := max(req.choices, 1)
	for i := 0; i < n; i++ {
		msg := miMessage{Role: "assistant", Content: ""}
		finish := "stop"
		switch {
		case a.fault == FaultFinishError:
			finish = "error"
		case i < len(a.args):
			args, _ := json.Marshal(a.args[i]) // a JSON string
			if req.argsObject && json.Valid([]byte(a.args[i])) {
				args = json.RawMessage(a.args[i])
			}
			msg.ToolCalls = []miToolCall{{ID: strings.TrimPrefix(a.callIDs[i], "call_")[:9], Type: "function",
				Function: miFunctionCall{Name: req.tool.name, Arguments: args}}}
			finish = "tool_calls"
		default:
			msg.Content = a.text
		}
		if mistralThinks(req.effort) && a.fault != FaultFinishError {
			text, _ := msg.Content.(string)
			msg.Content = []any{
				map[string]any{"type": "thinking", "thinking": []any{
					map[string]any{"type": "text", "text": "The record is read against the question."}}},
				map[string]any{"type": "text", "text": text},
			}
		}
		resp.Choices = append(resp.Choices, miChoice{Index: i, Message: msg, FinishReason: finish})
	}
	resp.Usage = miUsage{PromptTokens: a.promptTokens, CompletionTokens: a.completionTokens,
		TotalTokens: a.promptTokens + a.completionTokens}
	if a.cachedTokens > 0 {
		resp.Usage.PromptTokensDetails = &miTokenDetails{CachedTokens: a.cachedTokens}
	}

	b, _ := json.Marshal(resp)
	return b
}
