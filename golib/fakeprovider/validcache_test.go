package fakeprovider

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

func TestValidShapesValidateOnlyNewShapes(t *testing.T) {
	decode := func(s string) any {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(s)))
		if err != nil {
			t.Fatal(err)
		}
		return doc
	}
	calls := 0
	invalid := errors.New("invalid")
	// Stands in for the schema: content must be a string, temperature at most 2.
	check := func(doc any) error {
		calls++
		body := doc.(map[string]any)
		for _, m := range body["messages"].([]any) {
			if _, ok := m.(map[string]any)["content"].(string); !ok {
				return invalid
			}
		}
		if t, ok := body["temperature"].(json.Number); ok {
			if f, _ := t.Float64(); f > 2 {
				return invalid
			}
		}
		return nil
	}
	v := newValidShapes()
	cases := []struct {
		name      string
		body      string
		wantErr   bool
		wantCalls int
	}{
		{"first of its shape", `{"model":"m","messages":[{"role":"user","content":"record one"}]}`, false, 1},
		{"other text, same shape", `{"model":"m","messages":[{"role":"user","content":"record two, longer"}]}`, false, 1},
		{"keys in another order", `{"messages":[{"content":"three","role":"user"}],"model":"m"}`, false, 1},
		{"content not a string", `{"model":"m","messages":[{"role":"user","content":3}]}`, true, 2},
		{"another model", `{"model":"n","messages":[{"role":"user","content":"x"}]}`, false, 3},
		{"a value outside messages", `{"model":"m","temperature":3,"messages":[{"role":"user","content":"x"}]}`, true, 4},
		{"a content outside messages counts", `{"model":"m","content":"a","messages":[{"role":"user","content":"x"}]}`, false, 5},
		{"its other text is another shape", `{"model":"m","content":"b","messages":[{"role":"user","content":"x"}]}`, false, 6},
		{"an invalid shape is validated again", `{"model":"m","messages":[{"role":"user","content":3}]}`, true, 7},
	}
	for _, tc := range cases {
		err := v.validate(decode(tc.body), check)
		if (err != nil) != tc.wantErr || calls != tc.wantCalls {
			t.Errorf("%s: error %v, %d validations; want error %v, %d", tc.name, err, calls, tc.wantErr, tc.wantCalls)
		}
	}
}
