package screen

import "encoding/json"

// Tool is a function tool in provider-neutral form: a name, a description and a JSON Schema
// for its arguments. Adapters wrap it in their protocol's shape.
type Tool struct {
	Name        string
	Description string
	Parameters  json.RawMessage
	// Strict is true for the built-in tools, whose schemas follow the strict-mode rules
	// (every property required, no additional properties).
	Strict bool
}

// DecisionField is the argument that carries the decision in the built-in tools, and the first
// place the decision is looked for in a custom tool's arguments.
const DecisionField = "decision_llm"

// DescriptionField and ConfidenceField are read from any tool's arguments when present.
const (
	DescriptionField = "detailed_description"
	ConfidenceField  = "confidence"
)

const (
	describeInclude = "If the study should be included for further review, write '1'. If the study should be excluded, write '0'."
	describeUnsure  = " If there is not enough information to make a clear decision, write '1.1'. If there is no or only very little information in the title and abstract, also write '1.1'."
	explainBinary   = "A detailed description of why the study should be included or excluded, written before the decision. If there is no information to judge, write 'No information'."
	explainUnsure   = "A detailed description of why the study should be included or excluded, or why no clear decision can be reached, written before the decision. If there is no information to judge, write 'No information'."
	confidenceText  = "How confident you are in the decision, from 0 (not confident at all) to 100 (completely confident)."
)

// BuiltinTool returns one of the built-in tools. When a description is asked for it comes first
// in the schema: strict structured output is generated in schema order, so the model states its
// reasons before it commits to a decision instead of rationalising a decision already made.
// Confidence comes after the decision, as a judgement of the decision just made.
func BuiltinTool(overinclusive, description, confidence bool) Tool {
	name := "inclusion_decision_simple"
	switch {
	case overinclusive && description:
		name = "inclusion_decision"
	case !overinclusive && description:
		name = "inclusion_decision_binary"
	case !overinclusive && !description:
		name = "inclusion_decision_simple_binary"
	}
	enum := []string{"1", "0"}
	legend := "1 = include, 0 = exclude."
	desc := describeInclude
	explain := explainBinary
	if overinclusive {
		enum = append(enum, "1.1")
		legend = "1 = include, 0 = exclude, 1.1 = uncertain (not enough information for a clear decision)."
		desc += describeUnsure
		explain = explainUnsure
	}
	desc += " Answer only by calling this function."

	var props []property
	if description {
		props = append(props, property{DescriptionField, map[string]any{"type": "string", "description": explain}})
	}
	props = append(props, property{DecisionField, map[string]any{"type": "string", "enum": enum, "description": legend}})
	if confidence {
		props = append(props, property{ConfidenceField, map[string]any{"type": "integer", "description": confidenceText}})
	}
	params := orderedSchema(props)
	return Tool{Name: name, Description: desc, Parameters: params, Strict: true}
}

type property struct {
	name   string
	schema map[string]any
}

// orderedSchema writes the object schema by hand because encoding/json sorts map keys, and the
// order of properties is part of the tool's design.
func orderedSchema(props []property) json.RawMessage {
	buf := []byte(`{"type":"object","properties":{`)
	required := make([]string, 0, len(props))
	for i, p := range props {
		if i > 0 {
			buf = append(buf, ',')
		}
		k, _ := json.Marshal(p.name)
		v, _ := json.Marshal(p.schema)
		buf = append(buf, k...)
		buf = append(buf, ':')
		buf = append(buf, v...)
		required = append(required, p.name)
	}
	r, _ := json.Marshal(required)
	buf = append(buf, `},"required":`...)
	buf = append(buf, r...)
	buf = append(buf, `,"additionalProperties":false}`...)
	return buf
}
