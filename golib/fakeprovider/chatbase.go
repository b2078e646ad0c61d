package fakeprovider

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// chatBase is what OpenAI's and Mistral's chat completions share: a bearer key, function tools,
// the tool a tool_choice names, a seed and n. Each protocol embeds it and keeps only what differs:
// its dialect, its schemas, its errors and its answer's shape.
// withSchemas builds a chat-completions protocol once its request schemas are read.
func withSchemas[P any](load func() (*chatSchemas, error), build func(*chatSchemas) P) (P, error) {
	s, err := load()
	if err != nil {
		var none P
		return none, err
	}
	return build(s), nil
}

type chatBase struct {
	dialect chatDialect
}

// chatDialect is what the two name or read differently.
type chatDialect struct {
	// seedField is the body field of the seed ("seed", "random_seed").
	seedField string
	// typelessTools: a tool without "type" is a function (Mistral).
	typelessTools bool
	// forcing are the tool_choice words that force a call.
	forcing map[string]bool
}

func (b chatBase) apiKey(r *http.Request) string {
	h := strings.TrimSpace(r.Header.Get("Authorization"))
	if len(h) < 7 || !strings.EqualFold(h[:7], "bearer ") {
		return ""
	}
	return strings.TrimSpace(h[7:])
}

// tools returns the function tools of a tools array, in order.
func (b chatBase) tools(v any) []toolDef {
	list, _ := v.([]any)
	var out []toolDef
	for _, t := range list {
		tm, _ := t.(map[string]any)
		if typ, has := tm["type"]; typ != "function" && (has || !b.dialect.typelessTools) {
			continue
		}
		fn, _ := tm["function"].(map[string]any)
		name, _ := fn["name"].(string)
		params, _ := fn["parameters"].(map[string]any)
		out = append(out, toolDef{name: name, schema: params})
	}
	return out
}

// extract reads a valid request: the model, the messages, the tool to call, the seed and n.
func (b chatBase) extract(body map[string]any) *chatRequest {
	req := &chatRequest{choices: 1}
	req.model, _ = body["model"].(string)
	readChatMessages(req, body)

	tools := b.tools(body["tools"])
	switch c := body["tool_choice"].(type) {
	case string:
		if c != "none" && len(tools) > 0 {
			req.tool, req.forced = &tools[0], b.dialect.forcing[c]
		}
	case map[string]any:
		if c["type"] == "allowed_tools" {
			allowed := map[string]bool{}
			list, _ := jsonPointer(c, "/allowed_tools/tools").([]any)
			for _, t := range list {
				if tm, ok := t.(map[string]any); ok {
					allowed[stringAt(tm, "function", "name")] = true
				}
			}
			for i := range tools {
				if allowed[tools[i].name] {
					req.tool = &tools[i]
					break
				}
			}
			break
		}
		name := stringAt(c, "function", "name")
		for i := range tools {
			if tools[i].name == name {
				req.tool, req.forced = &tools[i], true
			}
		}
	default: // absent: "auto"
		if len(tools) > 0 {
			req.tool = &tools[0]
		}
	}
	if s, ok := body[b.dialect.seedField].(json.Number); ok {
		if v, err := s.Int64(); err == nil {
			req.seed = &v
		}
	}
	if n, ok := body["n"].(json.Number); ok {
		if v, err := n.Int64(); err == nil && v > 1 {
			req.choices = int(min(v, 128))
		}
	}
	req.effort, _ = body["reasoning_effort"].(string)
	return req
}

// loadChatSchemas reads an embedded extract of an OpenAPI document as JSON Schema 2020-12, with
// OpenAPI 3.0's `nullable` rewritten (a no-op on 3.1 documents), and compiles its schemas.
func loadChatSchemas(data []byte, url, label, request, response, errorRes string) (*chatSchemas, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("embedded %s spec: %w", label, err)
	}
	return compileChatSchemas(normaliseNullable(doc), url, label, request, response, errorRes)
}

// chatSchemas are the compiled schemas of a chat-completions document: the request's, the
// answer's and the error's (those two for the tests; nil when not asked for), and the properties
// the request defines at its top level.
type chatSchemas struct {
	doc      any // the parsed document (read-only after loading)
	request  *jsonschema.Schema
	response *jsonschema.Schema
	errorRes *jsonschema.Schema
	topLevel map[string]bool
	valid    *validShapes
}

// validate checks a request against the protocol's request schema.
func (s *chatSchemas) validate(doc any) error {
	return s.valid.validate(doc, s.request.Validate)
}

// compileChatSchemas compiles the named component schemas of a loaded document ("" for none).
func compileChatSchemas(doc any, url, label, request, response, errorRes string) (*chatSchemas, error) {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	compile := func(name string) (*jsonschema.Schema, error) {
		if name == "" {
			return nil, nil
		}
		return c.Compile(url + "#/components/schemas/" + name)
	}
	out := &chatSchemas{doc: doc, topLevel: map[string]bool{}, valid: newValidShapes()}
	var err error
	if out.request, err = compile(request); err != nil {
		return nil, err
	}
	if out.response, err = compile(response); err != nil {
		return nil, err
	}
	if out.errorRes, err = compile(errorRes); err != nil {
		return nil, err
	}
	schemas := jsonPointer(doc, "/components/schemas").(map[string]any)
	collectProperties(schemas, schemas[request], out.topLevel, 0)
	if len(out.topLevel) < 10 {
		return nil, fmt.Errorf("embedded %s spec: found only %d request properties", label, len(out.topLevel))
	}
	return out, nil
}

// decodeJSON reads a request body as the schema validator reads JSON (encoding/json, numbers as
// json.Number), refusing anything but one JSON value.
func decodeJSON(b []byte) (any, error) {
	return jsonschema.UnmarshalJSON(bytes.NewReader(b))
}
