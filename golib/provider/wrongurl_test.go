package provider

import (
	"net/http"
	"testing"
)

func TestWrongURL(t *testing.T) {
	html := http.Header{"Content-Type": {"text/html; charset=utf-8"}}
	cases := []struct {
		name   string
		status int
		header http.Header
		body   string
		want   bool
	}{
		{"no such path", 404, nil, `{"error":{"message":"Invalid URL (POST /v1)","type":"invalid_request_error"}}`, true},
		{"a bare 404", 404, nil, `404 page not found`, true},
		{"an unknown model (OpenAI)", 404, nil, `{"error":{"message":"The model ` + "`gpt-x`" + ` does not exist","code":"model_not_found"}}`, false},
		{"an unknown model (Ollama)", 404, nil, `{"error":"model \"llama9\" not found, try pulling it first"}`, false},
		{"an unknown model (Anthropic)", 404, nil, `{"type":"error","error":{"type":"not_found_error","message":"model: claude-x"}}`, false},
		{"no POST there", 405, nil, ``, true},
		{"not implemented", 501, nil, ``, true},
		{"a web page", 200, html, `<html></html>`, true},
		{"an answer", 200, http.Header{"Content-Type": {"application/json"}}, `{}`, false},
		{"a server error", 500, nil, `{}`, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := c.header
			if h == nil {
				h = http.Header{}
			}
			_, got := WrongURL(Response{Status: c.status, Header: h, Body: []byte(c.body)})
			if got != c.want {
				t.Errorf("WrongURL = %v, want %v", got, c.want)
			}
		})
	}
}
