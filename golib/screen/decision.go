package screen

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"sync"
)

// Decision is one usable answer read from a tool call.
type Decision struct {
	Raw            string
	Binary         int32
	Description    string
	HasDescription bool
	Confidence     float64
	HasConfidence  bool
	// Arguments are all the arguments of a custom tool's call, as JSON text ("" for the built-in
	// tools, whose arguments are the fields above).
	Arguments string
}

// ReadDecision reads the decision from the arguments of a call to tool. The decision is the field
// named DecisionField when present, otherwise the tool's only enum property; anything else fails
// the answer with a reason. The mapping is exact: "1" and "1.1" include, "0" excludes, and any
// other value fails rather than being guessed at.
func ReadDecision(args map[string]any, tool *Tool) (Decision, error) {
	field := DecisionField
	raw, ok := args[field]
	var enum []string
	if tool != nil {
		enum = enumOf(tool.Parameters, field)
	}
	if !ok {
		if tool == nil {
			return Decision{}, fmt.Errorf("the arguments have no %q field", DecisionField)
		}
		name, values, found := onlyEnumProperty(tool.Parameters)
		if !found {
			return Decision{}, fmt.Errorf("the arguments of tool %q have no %q field and the tool has no single enum property to read the decision from", tool.Name, DecisionField)
		}
		field, enum = name, values
		if raw, ok = args[field]; !ok {
			return Decision{}, fmt.Errorf("the arguments of tool %q have no %q field", tool.Name, field)
		}
	}
	value, err := decisionString(raw)
	if err != nil {
		return Decision{}, fmt.Errorf("field %q: %w", field, err)
	}
	if enum != nil && !contains(enum, value) {
		return Decision{}, fmt.Errorf("field %q has the value %q, which is not in the tool's enum", field, value)
	}
	d := Decision{Raw: value}
	switch value {
	case "1", "1.1":
		d.Binary = 1
	case "0":
		d.Binary = 0
	default:
		return Decision{}, fmt.Errorf("field %q has the value %q; a decision must be \"1\", \"0\" or \"1.1\"", field, value)
	}
	d.Description, d.HasDescription = explanation(args, tool, field)
	// A confidence outside 0-100 is not trusted: the decision stands, the confidence is missing.
	if c, ok := args[ConfidenceField].(float64); ok && c >= 0 && c <= 100 {
		d.Confidence, d.HasConfidence = c, true
	}
	return d, nil
}

// reasonWords mark the name of an argument that explains a decision.
var reasonWords = regexp.MustCompile(`(?i)descri|reason|explan|rational|justif`)

// explanation reads the text that explains the decision: the argument detailed_description, else
// a custom tool's only free-text argument (a string without an enum, other than the decision)
// whose name speaks of a reason, else its only free-text argument at all.
func explanation(args map[string]any, tool *Tool, decisionField string) (string, bool) {
	if s, ok := args[DescriptionField].(string); ok {
		return s, true
	}
	if tool == nil {
		return "", false
	}
	s, ok := parseSchema(tool.Parameters)
	if !ok {
		return "", false
	}
	var free, reasons []string
	for name, p := range s.Properties {
		if name == decisionField || p.Enum != nil || !isStringType(p.Type) {
			continue
		}
		free = append(free, name)
		if reasonWords.MatchString(name) {
			reasons = append(reasons, name)
		}
	}
	var field string
	switch {
	case len(reasons) == 1:
		field = reasons[0]
	case len(reasons) == 0 && len(free) == 1:
		field = free[0]
	default:
		return "", false
	}
	text, ok := args[field].(string)
	return text, ok
}

// isStringType tells a JSON Schema type of "string", alone or with "null".
func isStringType(t any) bool {
	switch x := t.(type) {
	case string:
		return x == "string"
	case []any:
		for _, v := range x {
			if v == "string" {
				return true
			}
		}
	}
	return false
}

func decisionString(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64), nil
	case json.Number:
		return x.String(), nil
	default:
		return "", fmt.Errorf("the decision is a %T, not a string", v)
	}
}

type objectSchema struct {
	Properties map[string]struct {
		Enum []any `json:"enum"`
		Type any   `json:"type"`
	} `json:"properties"`
}

// parsedSchemas holds each tool schema read once: every answer is checked against its tool, and
// reading the schema for each cost more than reading the answer.
var parsedSchemas sync.Map // string(schema) -> *objectSchema (nil: not an object schema)

// parseSchema reads a tool's parameter schema; the result is shared and must not be changed.
func parseSchema(schema json.RawMessage) (*objectSchema, bool) {
	if v, ok := parsedSchemas.Load(string(schema)); ok {
		s := v.(*objectSchema)
		return s, s != nil
	}
	s := new(objectSchema)
	if json.Unmarshal(schema, s) != nil {
		s = nil
	}
	parsedSchemas.Store(string(schema), s)
	return s, s != nil
}

func enumOf(schema json.RawMessage, field string) []string {
	s, ok := parseSchema(schema)
	if !ok {
		return nil
	}
	p, ok := s.Properties[field]
	if !ok || p.Enum == nil {
		return nil
	}
	return enumStrings(p.Enum)
}

func onlyEnumProperty(schema json.RawMessage) (string, []string, bool) {
	s, ok := parseSchema(schema)
	if !ok {
		return "", nil, false
	}
	name, count := "", 0
	for k, p := range s.Properties {
		if p.Enum != nil {
			name = k
			count++
		}
	}
	if count != 1 {
		return "", nil, false
	}
	return name, enumStrings(s.Properties[name].Enum), true
}

func enumStrings(values []any) []string {
	out := make([]string, 0, len(values))
	for _, v := range values {
		if s, err := decisionString(v); err == nil {
			out = append(out, s)
		}
	}
	return out
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}
