package main

/*
#include <stdlib.h>
*/
import "C"

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"unsafe"

	"github.com/tabscreen/tabscreen/golib/arrowio"
	"github.com/tabscreen/tabscreen/golib/engine"
	"github.com/tabscreen/tabscreen/golib/provider"
	"github.com/tabscreen/tabscreen/golib/screen"
)

// TsProviders describes every provider of the registry: R reads it once and looks providers up
// in it instead of branching on their names.
//
//export TsProviders
func TsProviders(doc **C.char) (status C.int) {
	defer recovered(&status, doc)
	return succeed(doc, map[string]any{"providers": provider.All()})
}

type preflightRequest struct {
	Op       string                 `json:"op"` // fields, settings, estimate, cutoffs, holding
	Provider string                 `json:"provider"`
	Models   []provider.PolicyModel `json:"models"`
	Args     provider.PolicyArgs    `json:"args"`
	Estimate screen.EstimateInput   `json:"estimate"`
	Upper    *float64               `json:"incl_cutoff_upper"`
	Lower    *float64               `json:"incl_cutoff_lower"`
	// Columns are the text columns of the table that "fields" reads (all of them when empty).
	Columns []string `json:"columns"`
	// Options and Store are the run options and the store file of "holding".
	Options json.RawMessage `json:"options"`
	Store   string          `json:"store"`
}

// TsPreflight answers what R asks before a run, with the rules that the run itself applies:
// "fields" (a table of text columns in (in, inLen); for each column X, X_blank and X_chars in
// *out), "settings" (each model's request fields, or the argument error of a model), "estimate"
// (the pre-run price estimate) and "cutoffs" (the effective inclusion cut-offs of spec section 3).
//
//export TsPreflight
func TsPreflight(request *C.char, in unsafe.Pointer, inLen C.size_t, out *unsafe.Pointer, outLen *C.size_t, doc **C.char) (status C.int) {
	defer recovered(&status, doc)
	*out, *outLen = nil, 0
	var req preflightRequest
	if err := decodeStrict("preflight request", []byte(C.GoString(request)), &req); err != nil {
		return fail(doc, "tabscreen_error_internal", err)
	}
	switch req.Op {
	case "fields":
		var t *arrowio.Table
		var err error
		if t, err = arrowio.Decode(cView(in, inLen)); err != nil {
			return fail(doc, "tabscreen_error_ipc", err)
		}
		if err := cTable(fieldTable(t, req.Columns), out, outLen); err != nil {
			return fail(doc, "tabscreen_error_ipc", err)
		}
		return succeed(doc, struct{}{})
	case "settings":
		d, ok := provider.Lookup(req.Provider)
		if !ok {
			return fail(doc, "tabscreen_error_internal", fmt.Errorf("unknown provider %q", req.Provider))
		}
		settings, err := d.Settings(req.Models, req.Args)
		var ae *provider.ArgError
		if errors.As(err, &ae) {
			*doc = cJSON(map[string]any{"error": ae})
			return statusError
		}
		if err != nil {
			return fail(doc, "tabscreen_error_internal", err)
		}
		out := make([]json.RawMessage, len(settings))
		for i, s := range settings {
			if out[i], err = d.SettingsJSON(s); err != nil {
				return fail(doc, "tabscreen_error_internal", err)
			}
		}
		return succeed(doc, map[string]any{"settings": out})
	case "estimate":
		return succeed(doc, map[string]any{"estimate": screen.Estimate(req.Estimate)})
	case "holding":
		// What the store holds of the run this call would continue (the records table in `in`).
		t, err := arrowio.Decode(cView(in, inLen))
		if err != nil {
			return fail(doc, "tabscreen_error_ipc", err)
		}
		recs, err := recordsOf(t)
		if err != nil {
			return fail(doc, "tabscreen_error_ipc", err)
		}
		opts, err := runOptions(req.Options)
		if err != nil {
			return fail(doc, "tabscreen_error_internal", err)
		}
		h, err := engine.Holding(req.Store, opts, recs)
		if err != nil {
			return storeErr(doc, err)
		}
		return succeed(doc, map[string]any{"holding": h})
	case "cutoffs":
		c := screen.EffectiveCutoffs(req.Upper, req.Lower)
		return succeed(doc, map[string]float64{"upper": c.Upper, "lower": c.Lower})
	}
	return fail(doc, "tabscreen_error_internal", fmt.Errorf("unknown preflight operation %q", req.Op))
}

// fieldTable gives, for every text column of t (of those named, when names are given), whether
// each value is blank (the question's rule) and its length as the price estimate counts it.
func fieldTable(t *arrowio.Table, names []string) *arrowio.Table {
	out := arrowio.NewTable(t.NumRows)
	for i := range t.Columns {
		c := &t.Columns[i]
		if c.Kind != arrowio.KindUtf8 || (len(names) > 0 && !slices.Contains(names, c.Name)) {
			continue
		}
		blank, chars := make([]bool, t.NumRows), make([]int32, t.NumRows)
		for i := range chars {
			n, b := screen.FieldChars(c.Str[i], !c.IsNull(i))
			chars[i], blank[i] = int32(n), b
		}
		out.AddBool(c.Name+"_blank", blank, nil).AddI32(c.Name+"_chars", chars, nil)
	}
	return out
}

type probeRequest struct {
	Provider string              `json:"provider"`
	APIURL   string              `json:"api_url"`
	Model    string              `json:"model"`
	Rules    *provider.ModelRule `json:"rules"`
}

// TsProbe sends the smallest request of a provider to one model and returns the rate-limit
// headers of the answer (rate_limits_per_minute()). The key is its own argument, as for a run.
//
//export TsProbe
func TsProbe(request *C.char, apiKey *C.char, doc **C.char) (status C.int) {
	defer recovered(&status, doc)
	var req probeRequest
	if err := decodeStrict("probe request", []byte(C.GoString(request)), &req); err != nil {
		return fail(doc, "tabscreen_error_internal", err)
	}
	d, ok := provider.Lookup(req.Provider)
	if !ok {
		return fail(doc, "tabscreen_error_internal", fmt.Errorf("unknown provider %q", req.Provider))
	}
	info, err := engine.Probe(context.Background(), d, req.APIURL, req.Model, req.Rules, C.GoString(apiKey))
	var pe *engine.ProbeError
	if errors.As(err, &pe) {
		*doc = cJSON(map[string]errorBody{"error": {Class: pe.Class, Message: pe.Message, Status: pe.Status}})
		return statusError
	}
	if err != nil {
		return fail(doc, "tabscreen_error_http", err)
	}
	return succeed(doc, info)
}
