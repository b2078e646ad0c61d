//go:build cgo

package main

import (
	"strings"
	"testing"

	"github.com/tabscreen/tabscreen/golib/engine"
	"github.com/tabscreen/tabscreen/golib/fakeprovider"
	"github.com/tabscreen/tabscreen/golib/review"
)

// Every document an export reads from R: a well-formed one decodes, one with a key its type does
// not know (at the top, or in an object inside it) is refused, and so is anything after it.
func TestDocumentsFromRAreDecodedStrictly(t *testing.T) {
	cases := []struct {
		export     string
		into       func() any
		doc        string
		misspelt   string // the document with one key misspelt
		mapOfNames bool   // free keys (header names): nothing can be misspelt
	}{
		{"TsRunStart", func() any { return engine.NewOptions() },
			`{"api_url":"http://x","prompts":["p"],"models":[{"name":"m","reps":1,"rpm":1}]}`,
			`{"api_url":"http://x","prompts":["p"],"models":[{"name":"m","reps":1,"rpms":1}]}`, false},
		{"TsRunReply", func() any { return &[]engine.CallbackReply{} }, `[{"id":1,"value":0.5,"error":""}]`,
			`[{"id":1,"valeu":0.5,"error":""}]`, false},
		{"TsAggregate", func() any { return &aggregateOptions{} }, `{"incl_cutoff_upper":0.5}`,
			`{"incl_cutof_upper":0.5}`, false},
		{"TsIsTransient", func() any { return &map[string]string{} }, `{"retry-after":"1"}`, "", true},
		{"TsPlan", func() any { return &planRequest{} }, `{"cutoffs":{"incl_cutoff_upper":0.5}}`,
			`{"cutoffs":{"incl_cutoff_uper":0.5}}`, false},
		{"TsProbe", func() any { return &probeRequest{} }, `{"provider":"a","api_url":"http://x","model":"m"}`,
			`{"provider":"a","apiurl":"http://x","model":"m"}`, false},
		{"TsStore", func() any { return &storeRequest{} }, `{"op":"runs","path":"s.sqlite"}`,
			`{"op":"runs","paht":"s.sqlite"}`, false},
		{"TsBatch", func() any { return &batchRequest{} }, `{"op":"cancel","path":"s","run_id":"r"}`,
			`{"op":"cancel","path":"s","runid":"r"}`, false},
		{"TsFakeServe", func() any { return &fakeprovider.ServeOptions{} }, `{"port":0,"port_file":"f","config":{"seed":1}}`,
			`{"port":0,"portfile":"f"}`, false},
		{"TsReviewServe", func() any { return &review.Options{} }, `{"store":"s","run_id":"r","page":"p","port":0,"port_file":"f"}`,
			`{"store":"s","run_id":"r","page":"p","port":0,"port_fiel":"f"}`, false},
		{"TsReview", func() any { return &reviewRequest{} }, `{"op":"audit","path":"s","run_id":"r","seed":1,"size":2}`,
			`{"op":"audit","path":"s","run_id":"r","sede":1,"size":2}`, false},
		{"TsRefs", func() any { return &refsRequest{} }, `{"op":"columns","names":["TI"]}`,
			`{"op":"columns","name":["TI"]}`, false},
	}
	for _, c := range cases {
		if err := decodeStrict(c.export, []byte(c.doc), c.into()); err != nil {
			t.Errorf("%s: %v", c.export, err)
		}
		for _, bad := range []string{c.misspelt, c.doc + ` {}`, c.doc + `x`} {
			if bad == "" {
				continue
			}
			err := decodeStrict(c.export, []byte(bad), c.into())
			if err == nil || !strings.Contains(err.Error(), "the "+c.export+" from R") {
				t.Errorf("%s: %s decoded (%v)", c.export, bad, err)
			}
		}
		if !c.mapOfNames && c.misspelt == "" {
			t.Errorf("%s: no misspelt document", c.export)
		}
	}
	if _, err := runOptions([]byte(`{"api_url":"http://x","prompt":["p"]}`)); err == nil {
		t.Error("misspelt run options accepted")
	}
	if _, err := runOptions([]byte(`{"api_url":"http://x","prompts":["p"]}`)); err == nil {
		t.Error("run options without a model accepted")
	}
}
