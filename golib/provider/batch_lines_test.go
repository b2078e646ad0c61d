package provider

import (
	"strings"
	"testing"
)

// Every shape of a result line that the providers' documents allow, or that files were seen to
// hold, is read on its own: a line that cannot be read fails alone, with its reason, and the lines
// around it are read as if it were not there.
func TestBatchResultLinesStandAlone(t *testing.T) {
	const ok = `{"custom_id":"ok","response":{"status_code":200,"body":{"id":"x"}},"error":null}`
	const okB = `{"custom_id":"ok","result":{"type":"succeeded","message":{"id":"msg"}}}`
	cases := []struct {
		protocol, name, line string
		id                   string
		kind                 LineKind
		status               int
		message              string // a part of the line's message
	}{
		{"openai", "numeric error code beside a 500 response",
			`{"custom_id":"j6","response":{"status_code":500,"body":{}},"error":{"message":"Internal server error","code":500}}`,
			"j6", LineResponse, 500, "Internal server error"},
		{"mistral", "numeric error code beside a 500 response",
			`{"id":"b-6","custom_id":"j6","response":{"status_code":500,"body":{"object":"error"}},"error":{"message":"Internal server error","code":500}}`,
			"j6", LineResponse, 500, "Internal server error"},
		{"openai", "numeric error code without a response",
			`{"custom_id":"j1","response":null,"error":{"code":503,"message":"Service unavailable"}}`,
			"j1", LineFailed, 0, "503: Service unavailable"},
		{"mistral", "string error code without a response",
			`{"custom_id":"j1","response":null,"error":{"code":"server_error","message":"Internal error"}}`,
			"j1", LineFailed, 0, "server_error: Internal error"},
		{"openai", "status_code 0 and no error",
			`{"custom_id":"j2","response":{"status_code":0,"body":null},"error":null}`,
			"j2", LineFailed, 0, "status_code 0"},
		{"mistral", "status_code 0 with a numeric code",
			`{"custom_id":"j2","response":{"status_code":0},"error":{"code":0,"message":"timeout"}}`,
			"j2", LineFailed, 0, "timeout"},
		{"openai", "status_code written as a string",
			`{"custom_id":"j3","response":{"status_code":"429","body":{}}}`,
			"j3", LineResponse, 429, ""},
		{"mistral", "unknown fields and nulls",
			`{"id":null,"custom_id":"j4","response":{"status_code":200,"body":{"id":"c"},"x_ms":8},"error":null,"metadata":{"n":3},"x":[1]}`,
			"j4", LineResponse, 200, ""},
		{"openai", "an expiry with a numeric id field",
			`{"id":7,"custom_id":"j5","response":null,"error":{"code":"batch_expired","message":"expired"}}`,
			"j5", LineExpired, 0, "batch_expired"},
		{"openai", "an error written as a bare string",
			`{"custom_id":"j7","response":null,"error":"connection reset"}`,
			"j7", LineFailed, 0, "connection reset"},
		{"mistral", "a truncated line that still names its request",
			`{"id":"b-8","custom_id":"j8","response":{"status_code":200,"bo`,
			"j8", LineFailed, 0, "could not be read"},
		{"openai", "a line that is not JSON",
			`<html>502 Bad Gateway</html>`, "", LineFailed, 0, "could not be read"},
		{"mistral", "a JSON line that is not an object",
			`[1,2]`, "", LineFailed, 0, "not a JSON object"},
		{"anthropic", "an errored result holding the inner error alone",
			`{"custom_id":"j1","result":{"type":"errored","error":{"type":"api_error","message":"Internal server error"}}}`,
			"j1", LineResponse, 500, "Internal server error"},
		{"anthropic", "an errored result of an unknown error type",
			`{"custom_id":"j2","result":{"type":"errored","error":{"type":"error","error":{"type":"new_error","code":7}}}}`,
			"j2", LineFailed, 0, "new_error"},
		{"anthropic", "unknown fields and nulls",
			`{"custom_id":"j3","result":{"type":"succeeded","message":{"id":"m"},"x":null},"x_extra":{"a":1}}`,
			"j3", LineResponse, 200, ""},
		{"anthropic", "a result of an unknown type",
			`{"custom_id":"j4","result":{"type":"deferred"}}`, "j4", LineFailed, 0, "deferred"},
		{"anthropic", "a null result", `{"custom_id":"j5","result":null}`, "j5", LineFailed, 0, "without a type"},
		{"anthropic", "a truncated line", `{"custom_id":"j6","result":{"type":"succ`, "j6", LineFailed, 0, "could not be read"},
		{"anthropic", "a line that is not JSON", `Internal Server Error`, "", LineFailed, 0, "could not be read"},
	}
	for _, c := range cases {
		t.Run(c.protocol+"/"+c.name, func(t *testing.T) {
			api := batchAPIOf(t, c.protocol)
			good := ok
			if c.protocol == "anthropic" {
				good = okB
			}
			// The odd line between two good ones: all three are read.
			lines := api.ParseResults([]byte(good + "\n" + c.line + "\n" + strings.Replace(good, `"ok"`, `"ok2"`, 1) + "\n"))
			if len(lines) != 3 {
				t.Fatalf("%d lines: %+v", len(lines), lines)
			}
			for _, g := range []BatchLine{lines[0], lines[2]} {
				if g.Kind != LineResponse || g.Status != 200 || !strings.HasPrefix(g.CustomID, "ok") {
					t.Fatalf("a good line beside it was misread: %+v", g)
				}
			}
			l := lines[1]
			if l.CustomID != c.id || l.Kind != c.kind || l.Status != c.status || !strings.Contains(l.Message, c.message) {
				t.Fatalf("got id %q kind %d status %d message %q\nwant id %q kind %d status %d message with %q",
					l.CustomID, l.Kind, l.Status, l.Message, c.id, c.kind, c.status, c.message)
			}
		})
	}
}

func batchAPIOf(t *testing.T, protocol string) BatchAPI {
	t.Helper()
	for _, d := range All() {
		if d.Protocol == protocol && d.Batch != nil {
			return d.Batch(Settings{URL: "https://example.invalid/v1/chat/completions", APIKey: "k"})
		}
	}
	t.Fatalf("no batch API for %s", protocol)
	return nil
}
