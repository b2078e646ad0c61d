package provider

// Provider C: Mistral's chat completions (ChatCompletionRequest / ChatCompletionResponse of its
// OpenAPI document). The request schema is closed: a field the protocol does not define is a 422,
// so the dialect sends only Mistral's own names (random_seed, no verbosity).

import (
	"encoding/json"
	"fmt"
)

func init() {
	Register(Descriptor{Protocol: "mistral", Letter: "c", New: func(s Settings) (Adapter, error) { return newChat(s, mistralDialect) }})
}

var mistralDialect = dialect{
	seedField:       "random_seed",
	sendVerbosity:   false,
	toolChoiceWords: map[string]bool{"none": true, "auto": true, "any": true, "required": true},
	// "error" is a failure on Mistral's side, worth another attempt; the others cannot improve.
	finishFailures: map[string]bool{"error": true, "length": false, "model_length": false},
	errorMessage:   mistralErrorMessage,
	// Mistral documents no reset header; its 429s carry Retry-After.
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
