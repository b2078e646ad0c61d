package fakeprovider

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Validation of an Anthropic Messages request, field by field. Anthropic
// publishes no OpenAPI document, so the fields, their types and the rules
// below follow the service's documentation and its SDK types (see
// shared/research/providers.md, section 2.2). Messages are worded like the
// service's (pydantic-style "path: message"); only the status, the error
// type and the offending path matter to a client.

// anthropicTopLevel are the request fields the service accepts.
var anthropicTopLevel = map[string]bool{
	"model": true, "max_tokens": true, "messages": true, "system": true, "tools": true,
	"tool_choice": true, "thinking": true, "output_config": true, "temperature": true, "top_p": true,
	"top_k": true, "stop_sequences": true, "metadata": true, "service_tier": true, "stream": true,
	"inference_geo": true, "cache_control": true, "container": true,
}

// Content blocks a request may carry: allowed and required fields besides "type".
var anthropicBlocks = map[string]struct{ allowed, required []string }{
	"text":              {[]string{"text", "cache_control", "citations"}, []string{"text"}},
	"image":             {[]string{"source", "cache_control"}, []string{"source"}},
	"document":          {[]string{"source", "title", "context", "citations", "cache_control"}, []string{"source"}},
	"search_result":     {[]string{"source", "title", "content", "citations", "cache_control"}, []string{"source", "title", "content"}},
	"tool_use":          {[]string{"id", "name", "input", "cache_control"}, []string{"id", "name", "input"}},
	"tool_result":       {[]string{"tool_use_id", "content", "is_error", "cache_control"}, []string{"tool_use_id"}},
	"thinking":          {[]string{"thinking", "signature"}, []string{"thinking", "signature"}},
	"redacted_thinking": {[]string{"data"}, []string{"data"}},
}

var (
	anthropicToolNameRE   = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)
	anthropicServerToolRE = regexp.MustCompile(`^[a-z_]+_[0-9]{8}$`) // web_search_20250305, ...
)

func aFail(path, format string, a ...any) *failure {
	msg := fmt.Sprintf(format, a...)
	if path != "" {
		msg = path + ": " + msg
	}
	return &failure{kind: failInvalidRequest, message: msg, param: path}
}

// aJoin appends a field name or an index to a path. Paths are made for every field checked, so
// the usual kinds skip fmt.
func aJoin(path string, k any) string {
	var s string
	switch x := k.(type) {
	case string:
		s = x
	case int:
		s = strconv.Itoa(x)
	default:
		s = fmt.Sprint(k)
	}
	if path == "" {
		return s
	}
	return path + "." + s
}

// aAllowed reports the first field (in name order) of obj that is not allowed.
func aAllowed(path string, obj map[string]any, allowed ...string) *failure {
	ok := map[string]bool{}
	for _, a := range allowed {
		ok[a] = true
	}
	for _, k := range sortedKeys(obj) {
		if !ok[k] {
			return aFail(aJoin(path, k), "Extra inputs are not permitted")
		}
	}
	return nil
}

func aRequired(path string, obj map[string]any, keys ...string) *failure {
	for _, k := range keys {
		if _, ok := obj[k]; !ok {
			return aFail(aJoin(path, k), "Field required")
		}
	}
	return nil
}

func aObject(path string, v any) (map[string]any, *failure) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, aFail(path, "Input should be a valid dictionary or object to extract fields from")
	}
	return m, nil
}

func aList(path string, v any) ([]any, *failure) {
	l, ok := v.([]any)
	if !ok {
		return nil, aFail(path, "Input should be a valid list")
	}
	return l, nil
}

func aString(path string, v any) (string, *failure) {
	s, ok := v.(string)
	if !ok {
		return "", aFail(path, "Input should be a valid string")
	}
	return s, nil
}

func aBool(path string, v any) *failure {
	if _, ok := v.(bool); !ok {
		return aFail(path, "Input should be a valid boolean")
	}
	return nil
}

// aInt accepts a JSON number with an integral value (1024, 1024.0, 1.024e3).
func aInt(path string, v any) (int64, *failure) {
	x, ok := num(v)
	if !ok {
		return 0, aFail(path, "Input should be a valid integer")
	}
	if x != math.Trunc(x) || math.IsInf(x, 0) {
		return 0, aFail(path, "Input should be a valid integer, got a number with a fractional part")
	}
	if math.Abs(x) > 1<<53 {
		return 0, aFail(path, "Input should be a valid integer, unable to parse number as an integer")
	}
	return int64(x), nil
}

func aNumber(path string, v any, lo, hi float64) *failure {
	x, ok := num(v)
	if !ok {
		return aFail(path, "Input should be a valid number")
	}
	if x < lo {
		return aFail(path, "Input should be greater than or equal to %s", fmtNum(lo))
	}
	if x > hi {
		return aFail(path, "Input should be less than or equal to %s", fmtNum(hi))
	}
	return nil
}

func fmtNum(x float64) string { return fmt.Sprint(x) }

// aEnum checks a string against its allowed values.
func aEnum(path string, v any, values ...string) (string, *failure) {
	s, _ := v.(string)
	for _, x := range values {
		if s == x && v != nil {
			return s, nil
		}
	}
	return "", aFail(path, "Input should be %s", pyOrList(values))
}

// pyOrList words values as pydantic does: 'a', 'b' or 'c'.
func pyOrList(values []string) string {
	q := quoteAll(values)
	if len(q) == 1 {
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}

// checkAnthropicBody validates a request body and returns nil or the 400.
func checkAnthropicBody(body map[string]any, rc *runtimeConfig) *failure {
	if !rc.AllowUnknownFields {
		var unknown []string
		for k := range body {
			if !anthropicTopLevel[k] {
				unknown = append(unknown, k)
			}
		}
		if len(unknown) > 0 {
			sort.Strings(unknown)
			return aFail(unknown[0], "Extra inputs are not permitted")
		}
	}
	if f := aRequired("", body, "model", "max_tokens", "messages"); f != nil {
		return f
	}
	model, f := aString("model", body["model"])
	if f != nil {
		return f
	}
	if strings.TrimSpace(model) == "" {
		return aFail("model", "String should have at least 1 character")
	}
	maxTokens, f := aInt("max_tokens", body["max_tokens"])
	if f != nil {
		return f
	}
	if maxTokens < 1 {
		return aFail("max_tokens", "Input should be greater than or equal to 1")
	}
	if f := checkAnthropicMessages(body["messages"]); f != nil {
		return f
	}
	if v, ok := body["system"]; ok {
		if f := checkAnthropicSystem(v); f != nil {
			return f
		}
	}
	names, f := checkAnthropicTools(body)
	if f != nil {
		return f
	}
	if v, ok := body["tool_choice"]; ok {
		if f := checkAnthropicToolChoice(v, names, len(names) > 0 || hasList(body["tools"])); f != nil {
			return f
		}
	}
	if v, ok := body["thinking"]; ok {
		if f := checkAnthropicThinking(v, maxTokens); f != nil {
			return f
		}
	}
	if v, ok := body["output_config"]; ok {
		if f := checkAnthropicOutputConfig(v); f != nil {
			return f
		}
	}
	return checkAnthropicOptions(body)
}

func hasList(v any) bool {
	l, _ := v.([]any)
	return len(l) > 0
}

func checkAnthropicMessages(v any) *failure {
	msgs, f := aList("messages", v)
	if f != nil {
		return f
	}
	if len(msgs) == 0 {
		return aFail("messages", "at least one message is required")
	}
	if len(msgs) > 100000 {
		return aFail("messages", "too many messages (at most 100000)")
	}
	for i, m := range msgs {
		path := aJoin("messages", i)
		mm, f := aObject(path, m)
		if f != nil {
			return f
		}
		if f := aAllowed(path, mm, "role", "content"); f != nil {
			return f
		}
		if f := aRequired(path, mm, "role", "content"); f != nil {
			return f
		}
		if _, f := aEnum(aJoin(path, "role"), mm["role"], "user", "assistant"); f != nil {
			return f
		}
		last := i == len(msgs)-1 && mm["role"] == "assistant"
		empty, f := checkAnthropicContent(aJoin(path, "content"), mm["content"])
		if f != nil {
			return f
		}
		if empty && !last {
			return aFail(path, "all messages must have non-empty content except for the optional final "+
				"assistant message")
		}
	}
	return nil
}

// checkAnthropicContent checks a message content (a string or a list of
// blocks) and reports whether it is empty.
func checkAnthropicContent(path string, v any) (bool, *failure) {
	switch c := v.(type) {
	case string:
		return c == "", nil
	case []any:
		for i, b := range c {
			if f := checkAnthropicBlock(aJoin(path, i), b, nil); f != nil {
				return false, f
			}
		}
		return len(c) == 0, nil
	}
	return false, aFail(path, "Input should be a valid string or a valid list")
}

// checkAnthropicBlock checks one content block; only lists the types
// allowed (nil: all).
func checkAnthropicBlock(path string, v any, only []string) *failure {
	bm, f := aObject(path, v)
	if f != nil {
		return f
	}
	typ, _ := bm["type"].(string)
	if _, ok := bm["type"]; !ok {
		return aFail(path, "Unable to extract tag using discriminator 'type'")
	}
	spec, known := anthropicBlocks[typ]
	if known && only != nil {
		known = false
		for _, o := range only {
			known = known || o == typ
		}
	}
	if !known {
		tags := only
		if tags == nil {
			for k := range anthropicBlocks {
				tags = append(tags, k)
			}
			sort.Strings(tags)
		}
		return aFail(path, "Input tag '%v' found using 'type' does not match any of the expected tags: %s",
			bm["type"], strings.Join(quoteAll(tags), ", "))
	}
	bpath := aJoin(path, typ)
	if f := aAllowed(bpath, bm, append([]string{"type"}, spec.allowed...)...); f != nil {
		return f
	}
	if f := aRequired(bpath, bm, spec.required...); f != nil {
		return f
	}
	if cc, ok := bm["cache_control"]; ok {
		if f := checkCacheControl(aJoin(bpath, "cache_control"), cc); f != nil {
			return f
		}
	}
	switch typ {
	case "text":
		s, f := aString(aJoin(bpath, "text"), bm["text"])
		if f != nil {
			return f
		}
		if s == "" {
			return aFail(aJoin(bpath, "text"), "text content blocks must be non-empty")
		}
	case "image", "document":
		if _, f := aObject(aJoin(bpath, "source"), bm["source"]); f != nil {
			return f
		}
	case "tool_use":
		for _, k := range []string{"id", "name"} {
			if _, f := aString(aJoin(bpath, k), bm[k]); f != nil {
				return f
			}
		}
		if _, f := aObject(aJoin(bpath, "input"), bm["input"]); f != nil {
			return f
		}
	case "tool_result":
		if _, f := aString(aJoin(bpath, "tool_use_id"), bm["tool_use_id"]); f != nil {
			return f
		}
		if c, ok := bm["content"]; ok {
			if list, isList := c.([]any); isList {
				for i, b := range list {
					if f := checkAnthropicBlock(aJoin(aJoin(bpath, "content"), i), b,
						[]string{"text", "image", "document", "search_result"}); f != nil {
						return f
					}
				}
			} else if _, f := aString(aJoin(bpath, "content"), c); f != nil {
				return f
			}
		}
		if e, ok := bm["is_error"]; ok {
			if f := aBool(aJoin(bpath, "is_error"), e); f != nil {
				return f
			}
		}
	case "thinking":
		for _, k := range []string{"thinking", "signature"} {
			if _, f := aString(aJoin(bpath, k), bm[k]); f != nil {
				return f
			}
		}
	case "redacted_thinking":
		if _, f := aString(aJoin(bpath, "data"), bm["data"]); f != nil {
			return f
		}
	}
	return nil
}

func checkCacheControl(path string, v any) *failure {
	cm, f := aObject(path, v)
	if f != nil {
		return f
	}
	if f := aAllowed(path, cm, "type", "ttl"); f != nil {
		return f
	}
	if f := aRequired(path, cm, "type"); f != nil {
		return f
	}
	if _, f := aEnum(aJoin(path, "type"), cm["type"], "ephemeral"); f != nil {
		return f
	}
	if ttl, ok := cm["ttl"]; ok {
		if _, f := aEnum(aJoin(path, "ttl"), ttl, "5m", "1h"); f != nil {
			return f
		}
	}
	return nil
}

func checkAnthropicSystem(v any) *failure {
	switch s := v.(type) {
	case string:
		return nil
	case []any:
		for i, b := range s {
			if f := checkAnthropicBlock(aJoin("system", i), b, []string{"text"}); f != nil {
				return f
			}
		}
		return nil
	}
	return aFail("system", "Input should be a valid string or a valid list")
}

// checkAnthropicTools checks the tools and returns the names of the custom ones.
func checkAnthropicTools(body map[string]any) (map[string]bool, *failure) {
	names := map[string]bool{}
	v, ok := body["tools"]
	if !ok {
		return names, nil
	}
	tools, f := aList("tools", v)
	if f != nil {
		return nil, f
	}
	seen := map[string]bool{}
	for i, t := range tools {
		path := aJoin("tools", i)
		tm, f := aObject(path, t)
		if f != nil {
			return nil, f
		}
		if typ, has := tm["type"]; has && typ != "custom" {
			ts, _ := typ.(string)
			if !anthropicServerToolRE.MatchString(ts) {
				return nil, aFail(path, "Input tag '%v' found using 'type' does not match any of the "+
					"expected tags: 'custom' or a server tool type such as 'web_search_20250305'", typ)
			}
			name, f := aString(aJoin(aJoin(path, ts), "name"), tm["name"])
			if f != nil {
				return nil, f
			}
			if seen[name] {
				return nil, aFail("tools", "Tool names must be unique.")
			}
			seen[name] = true
			continue // a server tool: the fake never calls it
		}
		cpath := aJoin(path, "custom")
		if f := aAllowed(cpath, tm, "type", "name", "description", "input_schema", "strict", "cache_control",
			"input_examples"); f != nil {
			return nil, f
		}
		if f := aRequired(cpath, tm, "name", "input_schema"); f != nil {
			return nil, f
		}
		name, f := aString(aJoin(cpath, "name"), tm["name"])
		if f != nil {
			return nil, f
		}
		if !anthropicToolNameRE.MatchString(name) {
			return nil, aFail(aJoin(cpath, "name"), "String should match pattern '^[a-zA-Z0-9_-]{1,64}$'")
		}
		if d, ok := tm["description"]; ok {
			if _, f := aString(aJoin(cpath, "description"), d); f != nil {
				return nil, f
			}
		}
		schema, f := aObject(aJoin(cpath, "input_schema"), tm["input_schema"])
		if f != nil {
			return nil, f
		}
		if _, f := aEnum(aJoin(aJoin(cpath, "input_schema"), "type"), schema["type"], "object"); f != nil {
			return nil, f
		}
		if s, ok := tm["strict"]; ok {
			if f := aBool(aJoin(cpath, "strict"), s); f != nil {
				return nil, f
			}
		}
		if cc, ok := tm["cache_control"]; ok {
			if f := checkCacheControl(aJoin(cpath, "cache_control"), cc); f != nil {
				return nil, f
			}
		}
		if ex, ok := tm["input_examples"]; ok {
			list, f := aList(aJoin(cpath, "input_examples"), ex)
			if f != nil {
				return nil, f
			}
			for j, e := range list {
				if _, f := aObject(aJoin(aJoin(cpath, "input_examples"), j), e); f != nil {
					return nil, f
				}
			}
		}
		if seen[name] {
			return nil, aFail("tools", "Tool names must be unique.")
		}
		seen[name] = true
		names[name] = true
	}
	return names, nil
}

func checkAnthropicToolChoice(v any, names map[string]bool, hasTools bool) *failure {
	tc, f := aObject("tool_choice", v)
	if f != nil {
		return f
	}
	if f := aRequired("tool_choice", tc, "type"); f != nil {
		return f
	}
	typ, f := aEnum("tool_choice.type", tc["type"], "auto", "any", "tool", "none")
	if f != nil {
		return f
	}
	path := aJoin("tool_choice", typ)
	allowed := map[string][]string{
		"auto": {"type", "disable_parallel_tool_use"},
		"any":  {"type", "disable_parallel_tool_use"},
		"tool": {"type", "name", "disable_parallel_tool_use"},
		"none": {"type"},
	}[typ]
	if f := aAllowed(path, tc, allowed...); f != nil {
		return f
	}
	if d, ok := tc["disable_parallel_tool_use"]; ok {
		if f := aBool(aJoin(path, "disable_parallel_tool_use"), d); f != nil {
			return f
		}
	}
	if typ == "tool" {
		if f := aRequired(path, tc, "name"); f != nil {
			return f
		}
		name, f := aString(aJoin(path, "name"), tc["name"])
		if f != nil {
			return f
		}
		if hasTools && !names[name] {
			return aFail("tool_choice.name", "Tool '%s' not found in provided tools", name)
		}
	}
	if typ != "none" && !hasTools {
		return aFail("tool_choice", "tool_choice may only be specified while providing tools.")
	}
	return nil
}

func checkAnthropicThinking(v any, maxTokens int64) *failure {
	th, f := aObject("thinking", v)
	if f != nil {
		return f
	}
	if f := aRequired("thinking", th, "type"); f != nil {
		return f
	}
	typ, f := aEnum("thinking.type", th["type"], "enabled", "disabled", "adaptive", "between_tools")
	if f != nil {
		return f
	}
	path := aJoin("thinking", typ)
	allowed := map[string][]string{
		"enabled":       {"type", "budget_tokens", "display"},
		"disabled":      {"type"},
		"adaptive":      {"type", "display"},
		"between_tools": {"type", "display"},
	}[typ]
	if f := aAllowed(path, th, allowed...); f != nil {
		return f
	}
	if d, ok := th["display"]; ok {
		if _, f := aEnum(aJoin(path, "display"), d, "summarized", "omitted"); f != nil {
			return f
		}
	}
	if typ == "enabled" {
		if f := aRequired(path, th, "budget_tokens"); f != nil {
			return f
		}
		budget, f := aInt(aJoin(path, "budget_tokens"), th["budget_tokens"])
		if f != nil {
			return f
		}
		if budget < 1024 {
			return aFail(aJoin(path, "budget_tokens"), "Input should be greater than or equal to 1024")
		}
		if budget >= maxTokens {
			return aFail("", "`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our "+
				"documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking"+
				"#max-tokens-and-context-window-size")
		}
	}
	return nil
}

func checkAnthropicOutputConfig(v any) *failure {
	oc, f := aObject("output_config", v)
	if f != nil {
		return f
	}
	if f := aAllowed("output_config", oc, "effort", "format"); f != nil {
		return f
	}
	if e, ok := oc["effort"]; ok {
		if _, f := aEnum("output_config.effort", e, "low", "medium", "high", "xhigh", "max"); f != nil {
			return f
		}
	}
	if fv, ok := oc["format"]; ok {
		fm, f := aObject("output_config.format", fv)
		if f != nil {
			return f
		}
		if f := aAllowed("output_config.format", fm, "type", "schema"); f != nil {
			return f
		}
		if f := aRequired("output_config.format", fm, "type", "schema"); f != nil {
			return f
		}
		if _, f := aEnum("output_config.format.type", fm["type"], "json_schema"); f != nil {
			return f
		}
		if _, f := aObject("output_config.format.schema", fm["schema"]); f != nil {
			return f
		}
	}
	return nil
}

// checkAnthropicOptions checks the remaining optional fields.
func checkAnthropicOptions(body map[string]any) *failure {
	if v, ok := body["temperature"]; ok {
		if f := aNumber("temperature", v, 0, 1); f != nil {
			return f
		}
	}
	if v, ok := body["top_p"]; ok {
		if f := aNumber("top_p", v, 0, 1); f != nil {
			return f
		}
	}
	if v, ok := body["top_k"]; ok {
		k, f := aInt("top_k", v)
		if f != nil {
			return f
		}
		if k < 0 {
			return aFail("top_k", "Input should be greater than or equal to 0")
		}
	}
	if v, ok := body["stop_sequences"]; ok {
		list, f := aList("stop_sequences", v)
		if f != nil {
			return f
		}
		for i, s := range list {
			if _, f := aString(aJoin("stop_sequences", i), s); f != nil {
				return f
			}
		}
	}
	if v, ok := body["metadata"]; ok {
		md, f := aObject("metadata", v)
		if f != nil {
			return f
		}
		if f := aAllowed("metadata", md, "user_id"); f != nil {
			return f
		}
		if u, ok := md["user_id"]; ok && u != nil {
			if _, f := aString("metadata.user_id", u); f != nil {
				return f
			}
		}
	}
	if v, ok := body["service_tier"]; ok {
		if _, f := aEnum("service_tier", v, "auto", "standard_only"); f != nil {
			return f
		}
	}
	if v, ok := body["stream"]; ok {
		if f := aBool("stream", v); f != nil {
			return f
		}
		if v == true {
			return aFail("stream", "The fake provider does not implement streaming; send false or omit it.")
		}
	}
	if v, ok := body["inference_geo"]; ok {
		if _, f := aString("inference_geo", v); f != nil {
			return f
		}
	}
	if v, ok := body["cache_control"]; ok {
		if f := checkCacheControl("cache_control", v); f != nil {
			return f
		}
	}
	if v, ok := body["container"]; ok && v != nil {
		if _, f := aString("container", v); f != nil {
			return f
		}
	}
	return nil
}

// modelMatches reports whether model contains one of the patterns (case-insensitive).
func modelMatches(model string, patterns []string) bool {
	m := strings.ToLower(model)
	for _, p := range patterns {
		if p != "" && strings.Contains(m, strings.ToLower(p)) {
			return true
		}
	}
	return false
}

// anthropicThinks reports whether a valid request has thinking on: its
// thinking type is not "disabled", or it has none and the model thinks by default.
func anthropicThinks(body map[string]any, rc *runtimeConfig) bool {
	th, ok := body["thinking"].(map[string]any)
	if !ok {
		model, _ := body["model"].(string)
		return modelMatches(model, rc.AnthropicThinkingByDefault)
	}
	return th["type"] != "disabled"
}

// checkAnthropicRules applies the per-model rules (section 0.2 of the
// research notes), configurable through Config.Anthropic*.
func checkAnthropicRules(body map[string]any, rc *runtimeConfig) *failure {
	model, _ := body["model"].(string)
	msgs, _ := body["messages"].([]any)
	if last, _ := msgs[len(msgs)-1].(map[string]any); last["role"] == "assistant" &&
		modelMatches(model, rc.AnthropicNoPrefill) {
		return aFail("messages", "Assistant message prefill not supported for model %s: the conversation "+
			"must end with a user message.", model)
	}
	if th, ok := body["thinking"].(map[string]any); ok && th["type"] == "disabled" &&
		modelMatches(model, rc.AnthropicNoDisableThinking) {
		return aFail("thinking.type", "Thinking cannot be disabled for model %s.", model)
	}
	tc, _ := body["tool_choice"].(map[string]any)
	forced := tc["type"] == "any" || tc["type"] == "tool"
	if forced && modelMatches(model, rc.AnthropicNoForcedTool) {
		return aFail("tool_choice", "tool_choice of type '%v' is not supported for model %s; use "+
			"{\"type\": \"auto\"}.", tc["type"], model)
	}
	if forced && anthropicThinks(body, rc) {
		return aFail("", "Thinking may not be enabled when tool_choice forces tool use.")
	}
	return nil
}
