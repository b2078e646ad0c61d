package fakeprovider

import (
	"encoding/json"
	"math"
	"sort"
	"strconv"
	"strings"
)

// Tool arguments are derived from the tool's own JSON schema, generically:
// the fake knows no field name of any client's tools.
//
//   - const: the constant; enum: one of its values (see Config.Decisions and Config.Tendency);
//   - string: one to three sentences (within minLength/maxLength), so that texts differ in length;
//   - integer, number: a value within minimum/maximum (exclusive bounds
//     respected), [0, 100] for integers and [0, 1] for numbers when unbounded;
//   - boolean: false; null: null;
//   - object: every property in "properties"; array: minItems items (one if
//     minItems is absent and maxItems allows it);
//   - anyOf/oneOf: the first branch that is not null; allOf: the first branch;
//   - type lists: the first type that is not "null";
//   - local $ref ("#/$defs/x", "#/definitions/x") are followed.
//
// Every draw is a pure function of (base, the value's path), so a request
// gets the same arguments when its base is the same.

const argText = "Synthetic reason written by the fake provider."

type argFiller struct {
	root      any
	base      uint64
	decisions map[string]float64
	lean      *leaning // nil: no tendency
}

func fillArgs(schema map[string]any, base uint64, decisions map[string]float64) any {
	return fillArgsLeaning(schema, base, decisions, nil)
}

// fillArgsLeaning is fillArgs with the decision drawn by lean when it is not nil.
func fillArgsLeaning(schema map[string]any, base uint64, decisions map[string]float64, lean *leaning) any {
	if schema == nil {
		return map[string]any{}
	}
	f := &argFiller{root: schema, base: base, decisions: decisions, lean: lean}
	return f.value(schema, "", 0)
}

func (f *argFiller) draw(path string) float64 {
	return unit(hash(f.base, saltAnswer, hashString(path)))
}

// resolve follows local $refs.
func (f *argFiller) resolve(s map[string]any) map[string]any {
	for i := 0; i < 16; i++ {
		ref, ok := s["$ref"].(string)
		if !ok || !strings.HasPrefix(ref, "#") {
			return s
		}
		t, ok := jsonPointer(f.root, strings.TrimPrefix(ref, "#")).(map[string]any)
		if !ok {
			return s
		}
		s = t
	}
	return s
}

func jsonPointer(doc any, ptr string) any {
	if ptr == "" {
		return doc
	}
	cur := doc
	for _, tok := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch c := cur.(type) {
		case map[string]any:
			cur = c[tok]
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) {
				return nil
			}
			cur = c[i]
		default:
			return nil
		}
	}
	return cur
}

func (f *argFiller) value(sv any, path string, depth int) any {
	s, ok := sv.(map[string]any)
	if !ok || depth > 32 {
		return nil
	}
	s = f.resolve(s)
	if c, ok := s["const"]; ok {
		return c
	}
	if e, ok := s["enum"].([]any); ok && len(e) > 0 {
		return f.pickEnum(e, path)
	}
	for _, kw := range []string{"anyOf", "oneOf"} {
		if branches, ok := s[kw].([]any); ok && len(branches) > 0 {
			for _, b := range branches {
				if bm, ok := b.(map[string]any); ok && schemaType(f.resolve(bm)) != "null" {
					return f.value(bm, path, depth+1)
				}
			}
			return f.value(branches[0], path, depth+1)
		}
	}
	if branches, ok := s["allOf"].([]any); ok && len(branches) > 0 {
		return f.value(branches[0], path, depth+1)
	}
	switch schemaType(s) {
	case "string":
		return f.str(s, path)
	case "integer":
		lo, hi := bounds(s, 0, 100)
		lo, hi = math.Ceil(lo), math.Floor(hi)
		if hi < lo {
			return json.Number(strconv.FormatFloat(lo, 'f', 0, 64))
		}
		v := lo + math.Floor(f.draw(path)*(hi-lo+1))
		return json.Number(strconv.FormatFloat(math.Min(v, hi), 'f', 0, 64))
	case "number":
		lo, hi := bounds(s, 0, 1)
		v := lo + f.draw(path)*(hi-lo)
		if r := math.Round(v*100) / 100; r >= lo && r <= hi {
			v = r
		}
		return json.Number(strconv.FormatFloat(v, 'f', -1, 64))
	case "boolean":
		return false
	case "null":
		return nil
	case "array":
		n := intKw(s, "minItems", 0)
		if n == 0 && intKw(s, "maxItems", 1) > 0 {
			n = 1
		}
		out := make([]any, n)
		for i := range out {
			out[i] = f.value(s["items"], path+"/"+strconv.Itoa(i), depth+1)
		}
		return out
	default: // object, or untyped with properties
		props, _ := s["properties"].(map[string]any)
		out := make(map[string]any, len(props))
		for _, k := range sortedKeys(props) {
			out[k] = f.value(props[k], path+"/"+k, depth+1)
		}
		return out
	}
}

// schemaType returns the schema's type, the first non-null one of a list,
// "object" for an untyped schema with properties, "" otherwise.
func schemaType(s map[string]any) string {
	switch t := s["type"].(type) {
	case string:
		return t
	case []any:
		for _, x := range t {
			if ts, ok := x.(string); ok && ts != "null" {
				return ts
			}
		}
		if len(t) > 0 {
			if ts, ok := t[0].(string); ok {
				return ts
			}
		}
	}
	if _, ok := s["properties"]; ok {
		return "object"
	}
	return ""
}

func (f *argFiller) str(s map[string]any, path string) string {
	text := strings.TrimSpace(strings.Repeat(argText+" ", 1+int(f.draw(path+"#length")*3)))
	if maxLen := intKw(s, "maxLength", -1); maxLen >= 0 && len(text) > maxLen {
		text = text[:maxLen]
	}
	if minLen := intKw(s, "minLength", 0); len(text) < minLen {
		text += strings.Repeat(".", minLen-len(text))
	}
	return text
}

// pickEnum draws one enum value: by the tendency for the decision when there is one, else
// weighted by f.decisions when some values have a weight there, uniformly otherwise.
func (f *argFiller) pickEnum(values []any, path string) any {
	if f.lean != nil {
		if v, ok := f.lean.pick(values, f.draw(path)); ok {
			return v
		}
	}
	weights := make([]float64, len(values))
	total := 0.0
	for i, v := range values {
		if w, ok := f.decisions[enumKey(v)]; ok {
			weights[i] = w
			total += w
		}
	}
	u := f.draw(path)
	if total <= 0 {
		return values[int(u*float64(len(values)))%len(values)]
	}
	acc := 0.0
	for i, w := range weights {
		acc += w / total
		if u < acc && w > 0 {
			return values[i]
		}
	}
	for i := len(values) - 1; i >= 0; i-- { // rounding: the last weighted value
		if weights[i] > 0 {
			return values[i]
		}
	}
	return values[0]
}

// enumKey is the text a Decisions key is compared with: a string as is,
// anything else as its JSON text.
func enumKey(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case json.Number:
		return x.String()
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case nil:
		return "null"
	default:
		b, _ := json.Marshal(x)
		return string(b)
	}
}

func bounds(s map[string]any, defLo, defHi float64) (lo, hi float64) {
	lo, hi = defLo, defHi
	hasLo, hasHi := false, false
	if v, ok := num(s["minimum"]); ok {
		lo, hasLo = v, true
	}
	if v, ok := num(s["maximum"]); ok {
		hi, hasHi = v, true
	}
	if v, ok := num(s["exclusiveMinimum"]); ok && (!hasLo || v >= lo) {
		lo, hasLo = v+exclusiveStep(s), true
	}
	if v, ok := num(s["exclusiveMaximum"]); ok && (!hasHi || v <= hi) {
		hi, hasHi = v-exclusiveStep(s), true
	}
	switch {
	case hasLo && !hasHi && hi < lo:
		hi = lo + (defHi - defLo)
	case hasHi && !hasLo && lo > hi:
		lo = hi - (defHi - defLo)
	}
	return lo, hi
}

func exclusiveStep(s map[string]any) float64 {
	if schemaType(s) == "integer" {
		return 1
	}
	return 0.01
}

func num(v any) (float64, bool) {
	switch x := v.(type) {
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	case float64:
		return x, true
	case int:
		return float64(x), true
	}
	return 0, false
}

func intKw(s map[string]any, kw string, def int) int {
	if v, ok := num(s[kw]); ok && v >= 0 && v < 1e6 {
		return int(v)
	}
	return def
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// breakEnum makes args violate schema for the bad_enum fault: the first enum
// property (depth first, properties in name order) gets a value outside its
// enum; with no enum anywhere, the first required property is removed.
// It reports whether it changed anything.
func breakEnum(args any, schema map[string]any) bool {
	f := &argFiller{root: schema}
	if f.breakIn(args, schema, 0) {
		return true
	}
	obj, ok := args.(map[string]any)
	if !ok || schema == nil {
		return false
	}
	if req, ok := f.resolve(schema)["required"].([]any); ok {
		for _, r := range req {
			if k, ok := r.(string); ok {
				if _, present := obj[k]; present {
					delete(obj, k)
					return true
				}
			}
		}
	}
	return false
}

func (f *argFiller) breakIn(args any, sv any, depth int) bool {
	s, ok := sv.(map[string]any)
	obj, isObj := args.(map[string]any)
	if !ok || !isObj || depth > 32 {
		return false
	}
	s = f.resolve(s)
	props, _ := s["properties"].(map[string]any)
	for _, k := range sortedKeys(props) {
		ps, ok := props[k].(map[string]any)
		if !ok {
			continue
		}
		ps = f.resolve(ps)
		if e, ok := ps["enum"].([]any); ok && len(e) > 0 {
			obj[k] = outsideEnum(e)
			return true
		}
		if f.breakIn(obj[k], ps, depth+1) {
			return true
		}
	}
	return false
}

// outsideEnum returns a value that is not in the enum: "2", "3", ... when
// the enum holds strings (or a mix), max+1 when it holds only numbers.
func outsideEnum(values []any) any {
	allNum, maxV := true, math.Inf(-1)
	in := map[string]bool{}
	for _, v := range values {
		in[enumKey(v)] = true
		if x, ok := num(v); ok {
			maxV = math.Max(maxV, x)
		} else {
			allNum = false
		}
	}
	if allNum {
		return json.Number(strconv.FormatFloat(math.Floor(maxV)+1, 'f', -1, 64))
	}
	for i := 2; ; i++ {
		if c := strconv.Itoa(i); !in[c] {
			return c
		}
	}
}
