package provider

// Provider A: the OpenAI Chat Completions protocol (also served by Azure, Ollama, vLLM, llama.cpp
// and LM Studio). Request and response shapes follow CreateChatCompletionRequest and
// CreateChatCompletionResponse of OpenAI's OpenAPI document.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

func init() {
	Register(Descriptor{Protocol: "openai", Letter: "a", New: func(s Settings) (Adapter, error) { return newChat(s, openAIDialect) }})
}

var openAIDialect = dialect{
	seedField:       "seed",
	sendVerbosity:   true,
	toolChoiceWords: map[string]bool{"none": true, "auto": true, "required": true},
	finishFailures:  map[string]bool{"length": false, "content_filter": false},
	errorMessage:    openAIErrorMessage,
	resetWait:       openAIResetWait,
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

// openAIResetWait reads OpenAI's reset durations (such as "6m0s" or "12ms") of an exhausted
// allowance.
func openAIResetWait(h http.Header, _ time.Time) (time.Duration, bool) {
	for _, kind := range []string{"requests", "tokens"} {
		if h.Get("x-ratelimit-remaining-"+kind) != "0" {
			continue
		}
		if d, err := time.ParseDuration(h.Get("x-ratelimit-reset-" + kind)); err == nil && d > 0 {
			return d, true
		}
	}
	return 0, false
}

func snippet(body []byte) string {
	const max = 200
	if len(body) > max {
		return string(body[:max]) + "..."
	}
	if len(body) == 0 {
		return "(empty body)"
	}
	return string(body)
}
