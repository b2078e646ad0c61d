package fakeprovider

import (
	"fmt"
	"math/big"
	"sort"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"

	"github.com/tabscreen/tabscreen/golib/fakeprovider/spec"
)

// mistralSchemas are the compiled schemas of the Mistral chat completions API (its error schema
// is HTTPValidationError; it has no response schema of its own here).
type mistralSchemas = chatSchemas

const mistralSpecURL = "urn:tabscreen:fake:mistral-chat-completions.json"

// loadMistralSchemas reads the embedded extract of Mistral's OpenAPI 3.1
// document as JSON Schema 2020-12.
func loadMistralSchemas() (*mistralSchemas, error) {
	return loadChatSchemas(spec.MistralChatCompletions, mistralSpecURL, "Mistral", "ChatCompletionRequest", "", "HTTPValidationError")
}

// compileMistral compiles one component schema of doc.
func compileMistral(doc any, name string) (*jsonschema.Schema, error) {
	s, err := compileChatSchemas(doc, mistralSpecURL, "Mistral", "ChatCompletionRequest", name, "")
	if err != nil {
		return nil, err
	}
	return s.response, nil
}

// pydanticError is one entry of a FastAPI 422 body ({"detail": [...]}), the
// spec's ValidationError.
type pydanticError struct {
	Type  string         `json:"type"`
	Loc   []any          `json:"loc"`
	Msg   string         `json:"msg"`
	Input any            `json:"input"`
	Ctx   map[string]any `json:"ctx,omitempty"`
}

// pydanticErrors turns a validation error of the request body doc into
// FastAPI's list, as the service's request model (pydantic) words it.
func pydanticErrors(err error, doc any) []pydanticError {
	ve, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return []pydanticError{{Type: "value_error", Loc: []any{"body"}, Msg: "Value error, " + err.Error(),
			Input: doc}}
	}
	var out []pydanticError
	seen := map[string]bool{}
	for _, leaf := range validationLeaves(ve) {
		for _, pe := range pydanticOf(leaf, doc) {
			k := fmt.Sprint(pe.Loc) + "|" + pe.Type
			if !seen[k] {
				seen[k] = true
				out = append(out, pe)
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return locKey(out[i].Loc) < locKey(out[j].Loc) })
	return out
}

func locKey(loc []any) string {
	parts := make([]string, len(loc))
	for i, p := range loc {
		if n, ok := p.(int); ok {
			parts[i] = fmt.Sprintf("%08d", n)
		} else {
			parts[i] = fmt.Sprint(p)
		}
	}
	return strings.Join(parts, "\x00")
}

// validationLeaves flattens an error tree to the errors to report: in a
// oneOf/anyOf, the one branch the value was most likely meant for.
func validationLeaves(e *jsonschema.ValidationError) []*jsonschema.ValidationError {
	switch e.ErrorKind.(type) {
	case *kind.OneOf, *kind.AnyOf:
		return []*jsonschema.ValidationError{bestLeaf(e)}
	}
	if len(e.Causes) == 0 {
		return []*jsonschema.ValidationError{e}
	}
	var out []*jsonschema.ValidationError
	for _, c := range e.Causes {
		out = append(out, validationLeaves(c)...)
	}
	return out
}

// pydanticLoc converts an instance location to FastAPI's loc: "body", then
// keys, with array indexes as integers.
func pydanticLoc(doc any, loc []string) []any {
	out := []any{"body"}
	cur := doc
	for _, tok := range loc {
		switch c := cur.(type) {
		case []any:
			i, err := strconv.Atoi(tok)
			if err == nil {
				out = append(out, i)
				if i >= 0 && i < len(c) {
					cur = c[i]
					continue
				}
			} else {
				out = append(out, tok)
			}
			cur = nil
		case map[string]any:
			out = append(out, tok)
			cur = c[tok]
		default:
			out = append(out, tok)
			cur = nil
		}
	}
	return out
}

func pydanticOf(e *jsonschema.ValidationError, doc any) []pydanticError {
	loc := pydanticLoc(doc, e.InstanceLocation)
	input := jsonPointer(doc, jsonPtrOf(e.InstanceLocation))
	if len(e.InstanceLocation) == 0 {
		input = doc
	}
	one := func(typ, msg string, ctx map[string]any) []pydanticError {
		return []pydanticError{{Type: typ, Loc: loc, Msg: msg, Input: input, Ctx: ctx}}
	}
	switch k := e.ErrorKind.(type) {
	case *kind.AdditionalProperties:
		var out []pydanticError
		obj, _ := input.(map[string]any)
		for _, p := range k.Properties {
			l := append(append([]any(nil), loc...), p)
			out = append(out, pydanticError{Type: "extra_forbidden", Loc: l,
				Msg: "Extra inputs are not permitted", Input: obj[p]})
		}
		return out
	case *kind.Required:
		var out []pydanticError
		for _, p := range k.Missing {
			l := append(append([]any(nil), loc...), p)
			out = append(out, pydanticError{Type: "missing", Loc: l, Msg: "Field required", Input: input})
		}
		return out
	case *kind.Type:
		if len(e.InstanceLocation) == 0 {
			return one("model_attributes_type",
				"Input should be a valid dictionary or object to extract fields from", nil)
		}
		want := ""
		for _, w := range k.Want {
			if w != "null" {
				want = w
				break
			}
		}
		switch want {
		case "string":
			return one("string_type", "Input should be a valid string", nil)
		case "integer":
			if k.Got == "number" {
				return one("int_from_float", "Input should be a valid integer, got a number with a "+
					"fractional part", nil)
			}
			return one("int_type", "Input should be a valid integer", nil)
		case "number":
			return one("float_type", "Input should be a valid number", nil)
		case "boolean":
			return one("bool_type", "Input should be a valid boolean", nil)
		case "array":
			return one("list_type", "Input should be a valid list", nil)
		case "object":
			return one("dict_type", "Input should be a valid dictionary", nil)
		}
		return one("none_required", "Input should be None", nil)
	case *kind.Enum:
		want := make([]string, len(k.Want))
		for i, w := range k.Want {
			want[i] = enumKey(w)
		}
		expected := pyOrList(want)
		return one("enum", "Input should be "+expected, map[string]any{"expected": expected})
	case *kind.Const:
		expected := pyOrList([]string{enumKey(k.Want)})
		return one("literal_error", "Input should be "+expected, map[string]any{"expected": expected})
	case *kind.Minimum:
		return one("greater_than_equal", "Input should be greater than or equal to "+ratString(k.Want),
			map[string]any{"ge": ratValue(k.Want)})
	case *kind.Maximum:
		return one("less_than_equal", "Input should be less than or equal to "+ratString(k.Want),
			map[string]any{"le": ratValue(k.Want)})
	case *kind.ExclusiveMinimum:
		return one("greater_than", "Input should be greater than "+ratString(k.Want),
			map[string]any{"gt": ratValue(k.Want)})
	case *kind.ExclusiveMaximum:
		return one("less_than", "Input should be less than "+ratString(k.Want),
			map[string]any{"lt": ratValue(k.Want)})
	case *kind.MinItems:
		return one("too_short", fmt.Sprintf("List should have at least %d %s after validation, not %d",
			k.Want, plural(k.Want, "item"), k.Got), map[string]any{"field_type": "List",
			"min_length": k.Want, "actual_length": k.Got})
	case *kind.MaxItems:
		return one("too_long", fmt.Sprintf("List should have at most %d %s after validation, not %d",
			k.Want, plural(k.Want, "item"), k.Got), map[string]any{"field_type": "List",
			"max_length": k.Want, "actual_length": k.Got})
	case *kind.MinLength:
		return one("string_too_short", fmt.Sprintf("String should have at least %d %s", k.Want,
			plural(k.Want, "character")), map[string]any{"min_length": k.Want})
	case *kind.MaxLength:
		return one("string_too_long", fmt.Sprintf("String should have at most %d %s", k.Want,
			plural(k.Want, "character")), map[string]any{"max_length": k.Want})
	case *kind.OneOf: // matched several branches: the tag is missing
		return one("union_tag_not_found", "Unable to extract tag using discriminator", nil)
	}
	return one("value_error", "Value error, "+e.ErrorKind.LocalizedString(printer), nil)
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

func ratValue(r *big.Rat) any {
	if r == nil {
		return nil
	}
	if r.IsInt() && r.Num().IsInt64() {
		return r.Num().Int64()
	}
	f, _ := r.Float64()
	return f
}
