package fakeprovider

import (
	"fmt"
	"math/big"
	"sort"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/tabscreen/tabscreen/golib/fakeprovider/spec"
)

// openAISchemas are the compiled schemas of the OpenAI Chat Completions API.
type openAISchemas = chatSchemas

const openAISpecURL = "urn:tabscreen:fake:openai-chat-completions.json"

// loadOpenAISchemas reads the embedded extract of OpenAI's OpenAPI document
// as JSON Schema 2020-12. OpenAPI-only keywords (discriminator, example,
// x-*) are unknown to JSON Schema and so ignored; OpenAPI 3.0's
// `nullable: true`, which the document still uses on some fields, is
// rewritten to allow null, as the real service does.
func loadOpenAISchemas() (*openAISchemas, error) {
	return loadChatSchemas(spec.OpenAIChatCompletions, openAISpecURL, "OpenAI",
		"CreateChatCompletionRequest", "CreateChatCompletionResponse", "ErrorResponse")
}

// normaliseNullable rewrites OpenAPI 3.0 `nullable: true` into JSON Schema:
// a string `type` becomes [type, "null"] (and null joins an `enum`); a schema
// without `type` is wrapped as anyOf [{type: null}, schema].
func normaliseNullable(v any) any {
	switch x := v.(type) {
	case []any:
		for i := range x {
			x[i] = normaliseNullable(x[i])
		}
		return x
	case map[string]any:
		for k, e := range x {
			if k == "properties" || k == "$defs" || k == "patternProperties" {
				if m, ok := e.(map[string]any); ok { // names -> schemas
					for n, s := range m {
						m[n] = normaliseNullable(s)
					}
					continue
				}
			}
			x[k] = normaliseNullable(e)
		}
		if nb, ok := x["nullable"].(bool); ok {
			delete(x, "nullable")
			if !nb {
				return x
			}
			if t, ok := x["type"].(string); ok {
				x["type"] = []any{t, "null"}
				if e, ok := x["enum"].([]any); ok {
					x["enum"] = append(e, nil)
				}
				return x
			}
			return map[string]any{"anyOf": []any{map[string]any{"type": "null"}, x}}
		}
		return x
	}
	return v
}

// collectProperties adds the property names an object schema defines,
// following $ref and allOf/anyOf/oneOf.
func collectProperties(schemas map[string]any, v any, out map[string]bool, depth int) {
	s, ok := v.(map[string]any)
	if !ok || depth > 16 {
		return
	}
	if ref, ok := s["$ref"].(string); ok {
		collectProperties(schemas, schemas[strings.TrimPrefix(ref, "#/components/schemas/")], out, depth+1)
	}
	if props, ok := s["properties"].(map[string]any); ok {
		for k := range props {
			out[k] = true
		}
	}
	for _, kw := range []string{"allOf", "anyOf", "oneOf"} {
		if list, ok := s[kw].([]any); ok {
			for _, e := range list {
				collectProperties(schemas, e, out, depth+1)
			}
		}
	}
}

var printer = message.NewPrinter(language.English)

// describeValidation turns a validation error into an OpenAI-style message
// and the offending parameter ("" for the whole body).
func describeValidation(err error) (msg, param string) {
	ve, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return "Invalid request body: " + err.Error(), ""
	}
	leaf := bestLeaf(ve)
	loc := leaf.InstanceLocation
	param = paramName(loc)
	quoted := func(p string) string {
		if p == "" {
			return "the request body"
		}
		return "'" + p + "'"
	}
	switch k := leaf.ErrorKind.(type) {
	case *kind.Required:
		missing := append([]string(nil), k.Missing...)
		sort.Strings(missing)
		param = paramName(append(append([]string(nil), loc...), missing[0]))
		return fmt.Sprintf("Missing required parameter: '%s'.", param), param
	case *kind.Type:
		return fmt.Sprintf("Invalid type for %s: expected %s, but got %s instead.",
			quoted(param), orList(k.Want), article(k.Got)), param
	case *kind.Enum:
		want := make([]string, len(k.Want))
		for i, w := range k.Want {
			want[i] = "'" + enumKey(w) + "'"
		}
		return fmt.Sprintf("Invalid value for %s: '%s'. Supported values are: %s.",
			quoted(param), enumKey(k.Got), andList(want)), param
	case *kind.Const:
		return fmt.Sprintf("Invalid value for %s: '%s'. Supported values are: '%s'.",
			quoted(param), enumKey(k.Got), enumKey(k.Want)), param
	case *kind.MinItems:
		if k.Got == 0 {
			return fmt.Sprintf("Invalid %s: empty array. Expected an array with minimum length %d, "+
				"but got an empty array instead.", quoted(param), k.Want), param
		}
		return fmt.Sprintf("Invalid %s: array too short. Expected an array with minimum length %d, "+
			"but got an array with length %d instead.", quoted(param), k.Want, k.Got), param
	case *kind.MaxItems:
		return fmt.Sprintf("Invalid %s: array too long. Expected an array with maximum length %d, "+
			"but got an array with length %d instead.", quoted(param), k.Want, k.Got), param
	case *kind.Minimum:
		return fmt.Sprintf("Invalid %s: value below minimum value. Expected a value >= %s, but got %s instead.",
			quoted(param), ratString(k.Want), ratString(k.Got)), param
	case *kind.Maximum:
		return fmt.Sprintf("Invalid %s: value above maximum value. Expected a value <= %s, but got %s instead.",
			quoted(param), ratString(k.Want), ratString(k.Got)), param
	case *kind.MinLength:
		return fmt.Sprintf("Invalid %s: string too short. Expected a string with minimum length %d, "+
			"but got a string with length %d instead.", quoted(param), k.Want, k.Got), param
	case *kind.MaxLength:
		return fmt.Sprintf("Invalid %s: string too long. Expected a string with maximum length %d, "+
			"but got a string with length %d instead.", quoted(param), k.Want, k.Got), param
	case *kind.AdditionalProperties:
		return fmt.Sprintf("Invalid %s: unrecognized argument(s) %s.", quoted(param),
			andList(quoteAll(k.Properties))), param
	}
	return fmt.Sprintf("Invalid value for %s: %s.", quoted(param), leaf.ErrorKind.LocalizedString(printer)), param
}

// bestLeaf picks the error to report from a validation error tree: in a
// oneOf/anyOf, the branch the value was most likely meant for (one whose
// tag property - a property checked by enum/const, like "role" or "type" -
// matched), then the deepest location.
func bestLeaf(e *jsonschema.ValidationError) *jsonschema.ValidationError {
	if len(e.Causes) == 0 {
		return e
	}
	switch e.ErrorKind.(type) {
	case *kind.OneOf, *kind.AnyOf:
		depth := len(e.InstanceLocation)
		var best, first *jsonschema.ValidationError
		bestPen, allType, allEnum := 0, true, true
		var wants []string
		var enumWants []any
		for _, c := range e.Causes {
			l := bestLeaf(c)
			pen := branchPenalty(c, depth)
			if best == nil || pen < bestPen || (pen == bestPen && len(l.InstanceLocation) > len(best.InstanceLocation)) {
				best, bestPen = l, pen
			}
			if first == nil {
				first = l
			}
			if t, ok := l.ErrorKind.(*kind.Type); ok && len(l.InstanceLocation) == depth {
				wants = append(wants, t.Want...)
			} else {
				allType = false
			}
			switch k := l.ErrorKind.(type) {
			case *kind.Enum:
				enumWants = append(enumWants, k.Want...)
			case *kind.Const:
				enumWants = append(enumWants, k.Want)
			default:
				allEnum = false
			}
			if jsonPtrOf(l.InstanceLocation) != jsonPtrOf(first.InstanceLocation) {
				allEnum = false
			}
		}
		if allType { // the value has none of the branches' types
			got := best.ErrorKind.(*kind.Type).Got
			return &jsonschema.ValidationError{InstanceLocation: e.InstanceLocation,
				ErrorKind: &kind.Type{Got: got, Want: dedupe(wants)}}
		}
		if allEnum { // every branch wants another value at the same place (a tag)
			var got any
			switch k := first.ErrorKind.(type) {
			case *kind.Enum:
				got = k.Got
			case *kind.Const:
				got = k.Got
			}
			return &jsonschema.ValidationError{InstanceLocation: first.InstanceLocation,
				ErrorKind: &kind.Enum{Got: got, Want: dedupeAny(enumWants)}}
		}
		return best
	default:
		var best *jsonschema.ValidationError
		for _, c := range e.Causes {
			if l := bestLeaf(c); best == nil || len(l.InstanceLocation) > len(best.InstanceLocation) {
				best = l
			}
		}
		return best
	}
}

// branchPenalty is 1 when a oneOf/anyOf branch failed on the value's own
// type or on a tag property (enum/const one level below), 0 otherwise.
func branchPenalty(e *jsonschema.ValidationError, depth int) int {
	switch e.ErrorKind.(type) {
	case *kind.Enum, *kind.Const:
		if len(e.InstanceLocation) == depth+1 {
			return 1
		}
	case *kind.Type:
		if len(e.InstanceLocation) == depth {
			return 1
		}
	}
	for _, c := range e.Causes {
		if branchPenalty(c, depth) > 0 {
			return 1
		}
	}
	return 0
}

// paramName formats an instance location like OpenAI: messages[0].content.
func paramName(loc []string) string {
	var b strings.Builder
	for _, tok := range loc {
		if _, err := strconv.Atoi(tok); err == nil && b.Len() > 0 {
			b.WriteString("[" + tok + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(tok)
	}
	return b.String()
}

func orList(types []string) string {
	out := make([]string, len(types))
	for i, t := range types {
		out[i] = article(t)
	}
	if len(out) == 1 {
		return out[0]
	}
	return "one of " + strings.Join(out[:len(out)-1], ", ") + " or " + out[len(out)-1]
}

func article(t string) string {
	switch t {
	case "null":
		return "null"
	case "array", "object", "integer":
		return "an " + t
	}
	return "a " + t
}

func andList(items []string) string {
	switch len(items) {
	case 0:
		return ""
	case 1:
		return items[0]
	case 2:
		return items[0] + " and " + items[1]
	}
	return strings.Join(items[:len(items)-1], ", ") + ", and " + items[len(items)-1]
}

func quoteAll(items []string) []string {
	out := make([]string, len(items))
	for i, s := range items {
		out[i] = "'" + s + "'"
	}
	return out
}

func dedupe(items []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range items {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

func ratString(r *big.Rat) string {
	if r == nil {
		return "?"
	}
	if r.IsInt() {
		return r.Num().String()
	}
	f, _ := r.Float64()
	return strconv.FormatFloat(f, 'g', -1, 64)
}

func dedupeAny(items []any) []any {
	seen := map[string]bool{}
	var out []any
	for _, v := range items {
		if k := enumKey(v); !seen[k] {
			seen[k] = true
			out = append(out, v)
		}
	}
	return out
}

func jsonPtrOf(loc []string) string { return "/" + strings.Join(loc, "/") }
