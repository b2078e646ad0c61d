package fakeprovider

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Rules the real OpenAI service enforces that its OpenAPI document cannot
// express. Each returns nil or the 400 the service gives. They run after
// schema validation, so the shapes they read are known to be valid.
var openAIRules = []func(body map[string]any) *failure{
	ruleModelGiven,
	ruleMessagesNotEmpty,
	ruleNoStreaming,
	ruleFunctionTools,
	ruleToolChoiceNamesATool,
	ruleParallelToolCallsNeedTools,
}

func checkOpenAIRules(body map[string]any) *failure {
	for _, rule := range openAIRules {
		if f := rule(body); f != nil {
			return f
		}
	}
	return nil
}

func invalid(param, code, format string, a ...any) *failure {
	return &failure{kind: failInvalidRequest, param: param, code: code, message: fmt.Sprintf(format, a...)}
}

func ruleModelGiven(body map[string]any) *failure {
	if m, _ := body["model"].(string); strings.TrimSpace(m) == "" {
		return invalid("", "", "you must provide a model parameter")
	}
	return nil
}

func ruleMessagesNotEmpty(body map[string]any) *failure {
	if msgs, _ := body["messages"].([]any); len(msgs) == 0 {
		return invalid("messages", "empty_array", "Invalid 'messages': empty array. Expected an array with "+
			"minimum length 1, but got an empty array instead.")
	}
	return nil
}

// ruleNoStreaming: the fake does not implement server-sent events.
func ruleNoStreaming(body map[string]any) *failure {
	if s, _ := body["stream"].(bool); s {
		return invalid("stream", "unsupported_value", "The fake provider does not implement streaming; "+
			"send 'stream': false or omit it.")
	}
	return nil
}

var functionNameRE = regexp.MustCompile(`^[a-zA-Z0-9_-]+$`)

// ruleFunctionTools: names match ^[a-zA-Z0-9_-]{1,64}$, parameters are an
// object schema, and strict tools follow the Structured Outputs rules.
func ruleFunctionTools(body map[string]any) *failure {
	tools, _ := body["tools"].([]any)
	for i, t := range tools {
		tm, _ := t.(map[string]any)
		if tm["type"] != "function" {
			continue
		}
		fn, _ := tm["function"].(map[string]any)
		name, _ := fn["name"].(string)
		at := fmt.Sprintf("tools[%d].function", i)
		if !functionNameRE.MatchString(name) {
			return invalid(at+".name", "invalid_value", "Invalid '%s.name': string does not match pattern. "+
				"Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.", at)
		}
		if len(name) > 64 {
			return invalid(at+".name", "string_above_max_length", "Invalid '%s.name': string too long. "+
				"Expected a string with maximum length 64, but got a string with length %d instead.", at, len(name))
		}
		params, has := fn["parameters"].(map[string]any)
		if !has {
			continue
		}
		if t := params["type"]; t != "object" {
			return invalid(at+".parameters", "invalid_function_parameters", "Invalid schema for function '%s': "+
				"schema must be a JSON Schema of 'type: \"object\"', got 'type: \"%v\"'.", name, pyValue(t))
		}
		if strict, _ := fn["strict"].(bool); strict {
			if msg := checkStrictSchema(params, nil, 0); msg != "" {
				return invalid(at+".parameters", "invalid_function_parameters",
					"Invalid schema for function '%s': %s", name, msg)
			}
		}
	}
	return nil
}

// checkStrictSchema checks the Structured Outputs rules for objects: every
// property in "required" and "additionalProperties": false, recursively
// (properties, items, anyOf, $defs/definitions).
func checkStrictSchema(v any, ctx []string, depth int) string {
	s, ok := v.(map[string]any)
	if !ok || depth > 32 {
		return ""
	}
	props, hasProps := s["properties"].(map[string]any)
	if isObjectSchema(s) || hasProps {
		if ap, ok := s["additionalProperties"].(bool); !ok || ap {
			return fmt.Sprintf("In context=%s, 'additionalProperties' is required to be supplied and to be false.",
				pyTuple(ctx))
		}
		required := map[string]bool{}
		if req, ok := s["required"].([]any); ok {
			for _, r := range req {
				if k, ok := r.(string); ok {
					required[k] = true
				}
			}
		}
		for _, k := range sortedKeys(props) {
			if !required[k] {
				return fmt.Sprintf("In context=%s, 'required' is required to be supplied and to be an array "+
					"including every key in properties. Missing '%s'.", pyTuple(ctx), k)
			}
		}
		for _, k := range sortedKeys(props) {
			if msg := checkStrictSchema(props[k], appendCtx(ctx, "properties", k), depth+1); msg != "" {
				return msg
			}
		}
	}
	if msg := checkStrictSchema(s["items"], appendCtx(ctx, "items"), depth+1); msg != "" {
		return msg
	}
	if list, ok := s["anyOf"].([]any); ok {
		for i, b := range list {
			if msg := checkStrictSchema(b, appendCtx(ctx, "anyOf", strconv.Itoa(i)), depth+1); msg != "" {
				return msg
			}
		}
	}
	for _, kw := range []string{"$defs", "definitions"} {
		if defs, ok := s[kw].(map[string]any); ok {
			for _, k := range sortedKeys(defs) {
				if msg := checkStrictSchema(defs[k], appendCtx(ctx, kw, k), depth+1); msg != "" {
					return msg
				}
			}
		}
	}
	return ""
}

func isObjectSchema(s map[string]any) bool {
	switch t := s["type"].(type) {
	case string:
		return t == "object"
	case []any:
		for _, x := range t {
			if x == "object" {
				return true
			}
		}
	}
	return false
}

func appendCtx(ctx []string, more ...string) []string {
	return append(append([]string(nil), ctx...), more...)
}

// pyTuple formats a context the way the service's messages do: ('properties', 'x').
func pyTuple(ctx []string) string {
	parts := make([]string, len(ctx))
	for i, c := range ctx {
		if _, err := strconv.Atoi(c); err == nil {
			parts[i] = c
		} else {
			parts[i] = "'" + c + "'"
		}
	}
	if len(parts) == 1 {
		return "(" + parts[0] + ",)"
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

func pyValue(v any) string {
	if v == nil {
		return "None"
	}
	return fmt.Sprint(v)
}

func ruleToolChoiceNamesATool(body map[string]any) *failure {
	choice, present := body["tool_choice"]
	if !present || choice == nil {
		return nil
	}
	tools, _ := body["tools"].([]any)
	if len(tools) == 0 {
		return invalid("tool_choice", "", "Invalid value for 'tool_choice': 'tool_choice' is only allowed "+
			"when 'tools' are specified.")
	}
	names := map[string]bool{}
	for _, t := range functionTools(tools) {
		names[t.name] = true
	}
	cm, ok := choice.(map[string]any)
	if !ok {
		return nil
	}
	switch cm["type"] {
	case "function":
		if name := stringAt(cm, "function", "name"); !names[name] {
			return invalid("tool_choice", "", "Invalid value for 'tool_choice': function '%s' is not one of "+
				"the functions in 'tools'.", name)
		}
	case "allowed_tools":
		list, _ := jsonPointer(cm, "/allowed_tools/tools").([]any)
		for i, t := range list {
			tm, _ := t.(map[string]any)
			if tm["type"] != "function" {
				continue
			}
			if name := stringAt(tm, "function", "name"); !names[name] {
				return invalid(fmt.Sprintf("tool_choice.allowed_tools.tools[%d]", i), "",
					"Invalid value for 'tool_choice.allowed_tools.tools[%d]': function '%s' is not one of the "+
						"functions in 'tools'.", i, name)
			}
		}
	}
	return nil
}

func ruleParallelToolCallsNeedTools(body map[string]any) *failure {
	if _, present := body["parallel_tool_calls"]; !present {
		return nil
	}
	if tools, _ := body["tools"].([]any); len(tools) == 0 {
		return invalid("parallel_tool_calls", "", "Invalid value for 'parallel_tool_calls': "+
			"'parallel_tool_calls' is only allowed when 'tools' are specified.")
	}
	return nil
}
