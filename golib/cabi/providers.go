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
	"github.com/tabscreen/tabscreen/golib/store"
)

// TsProviders describes every provider of the registry: R reads it once and looks providers up
// in it instead of branching on their names.
//
//export TsProviders
func TsProviders(doc **C.char) (status C.int) {
	defer recovered(&status, doc)
	return succeed(doc, map[string]any{"providers": provider.All()})
}

// planRequest is everything R asks before a run, in one document; each part is optional. What a
// part needs of the records (their number, blank fields and characters, the fingerprint of
// "holding") it reads from the records table sent with the document, once.
type planRequest struct {
	// Settings: each model's request fields, from the provider's policy.
	Settings *settingsRequest `json:"settings"`
	// Estimate: the price estimate; its records and characters are the table's when one is sent,
	// and its models' settings those that Settings decides when it is asked.
	Estimate *screen.EstimateInput `json:"estimate"`
	// Cutoffs: the effective inclusion cut-offs of spec section 3.
	Cutoffs *cutoffsRequest `json:"cutoffs"`
	// Holding: what the answer store holds of the run that these options (with the settings
	// decided here) and the records would continue.
	Holding *holdingRequest `json:"holding"`
	// Body: the fields the user adds to the request body (`...`), checked against the models'
	// rules by the provider's policy; a refusal is a settings error.
	Body *bodyRequest `json:"body"`
}

type bodyRequest struct {
	Provider string                 `json:"provider"`
	Models   []provider.PolicyModel `json:"models"`
	Fields   []string               `json:"fields"`
}

type settingsRequest struct {
	Provider string                 `json:"provider"`
	Models   []provider.PolicyModel `json:"models"`
	Args     provider.PolicyArgs    `json:"args"`
}

type cutoffsRequest struct {
	Upper *float64 `json:"incl_cutoff_upper"`
	Lower *float64 `json:"incl_cutoff_lower"`
	// InclP: inclusion probabilities to label under these cut-offs (null for none).
	InclP []*float64 `json:"incl_p"`
}

// labelsAnswer is the final decision of each probability of cutoffsRequest.InclP.
type labelsAnswer struct {
	Final    []string `json:"final_decision_llm"`
	FinalNum []int32  `json:"final_decision_llm_num"`
}

type holdingRequest struct {
	Store   string          `json:"store"`
	Options json.RawMessage `json:"options"`
}

// fieldCounts are the blank titles and abstracts of the records (the question's rule) and their
// characters as the price estimate counts them.
type fieldCounts struct {
	Records       int     `json:"records"`
	TitleBlank    int     `json:"title_blank"`
	AbstractBlank int     `json:"abstract_blank"`
	EitherBlank   int     `json:"either_blank"`
	BothBlank     int     `json:"both_blank"`
	Chars         float64 `json:"chars"`
}

// planAnswer is what TsPlan returns. A model that cannot take the user's arguments is not an error
// of the call: R raises SettingsError after its own check of the records, and nothing that needs
// the settings (estimate, holding) is computed.
type planAnswer struct {
	Fields        *fieldCounts                    `json:"fields,omitempty"`
	Settings      []json.RawMessage               `json:"settings,omitempty"`
	SettingsError *provider.ArgError              `json:"settings_error,omitempty"`
	Estimate      map[string][]screen.EstimateRow `json:"estimate,omitempty"`
	Cutoffs       *screen.Cutoffs                 `json:"cutoffs,omitempty"`
	Labels        *labelsAnswer                   `json:"labels,omitempty"`
	Holding       *store.Holding                  `json:"holding,omitempty"`
}

// TsPlan answers, in one call, what R needs before a run, with the rules the run itself applies:
// the blank fields of the records table (in, inLen; read in place, during this call), each model's
// request settings, the price estimate (as the run goes, without the prompt caches, and at batch
// prices), the effective cut-offs, and what the answer store already holds of the call.
//
//export TsPlan
func TsPlan(request *C.char, in unsafe.Pointer, inLen C.size_t, doc **C.char) (status C.int) {
	defer recovered(&status, doc)
	var req planRequest
	if err := decodeStrict("plan request", []byte(C.GoString(request)), &req); err != nil {
		return fail(doc, "tabscreen_error_internal", err)
	}
	var ans planAnswer
	var recs *engine.Records
	if inLen > 0 {
		t, err := arrowio.View(cView(in, inLen))
		if err != nil {
			return fail(doc, "tabscreen_error_ipc", err)
		}
		r, err := recordsOf(t)
		if err != nil {
			return fail(doc, "tabscreen_error_ipc", err)
		}
		recs = &r
		ans.Fields = countFields(r)
	}
	if req.Cutoffs != nil {
		c := screen.EffectiveCutoffs(req.Cutoffs.Upper, req.Cutoffs.Lower)
		ans.Cutoffs = &c
		if req.Cutoffs.InclP != nil {
			final, num := c.Labels(req.Cutoffs.InclP)
			ans.Labels = &labelsAnswer{Final: final, FinalNum: num}
		}
	}
	var d provider.Descriptor
	var settings []provider.ModelSettings
	if s := req.Settings; s != nil {
		var ok bool
		if d, ok = provider.Lookup(s.Provider); !ok {
			return fail(doc, "tabscreen_error_internal", fmt.Errorf("unknown provider %q", s.Provider))
		}
		var err error
		if settings, err = d.Settings(s.Models, s.Args); err != nil {
			return ans.refused(doc, err)
		}
		ans.Settings = make([]json.RawMessage, len(settings))
		for i, m := range settings {
			if ans.Settings[i], err = d.SettingsJSON(m); err != nil {
				return fail(doc, "tabscreen_error_internal", err)
			}
		}
	}
	if b := req.Body; b != nil {
		bd, ok := provider.Lookup(b.Provider)
		if !ok {
			return fail(doc, "tabscreen_error_internal", fmt.Errorf("unknown provider %q", b.Provider))
		}
		if bd.CheckBody != nil {
			if err := bd.CheckBody(b.Models, b.Fields); err != nil {
				return ans.refused(doc, err)
			}
		}
	}
	if in := req.Estimate; in != nil {
		if recs != nil {
			in.Records, in.RecordChars = ans.Fields.Records, ans.Fields.Chars
		}
		if ans.Settings != nil {
			if len(in.Models) != len(ans.Settings) {
				return fail(doc, "tabscreen_error_internal", fmt.Errorf("the estimate has %d models, the settings %d", len(in.Models), len(ans.Settings)))
			}
			for i := range in.Models {
				if err := json.Unmarshal(ans.Settings[i], &in.Models[i].Settings); err != nil {
					return fail(doc, "tabscreen_error_internal", err)
				}
			}
		}
		ans.Estimate = estimates(*in)
	}
	if h := req.Holding; h != nil {
		if recs == nil {
			return fail(doc, "tabscreen_error_internal", fmt.Errorf("the holding of a store needs the records table"))
		}
		opts, err := runOptions(h.Options)
		if err != nil {
			return fail(doc, "tabscreen_error_internal", err)
		}
		if settings != nil {
			if err := withSettings(d, opts, ans.Settings); err != nil {
				return fail(doc, "tabscreen_error_internal", err)
			}
		}
		held, err := engine.Holding(h.Store, opts, *recs)
		if err != nil {
			return storeErr(doc, err)
		}
		ans.Holding = &held
	}
	return succeed(doc, ans)
}

// refused ends the plan on a policy's error: an argument error goes back in the answer, for R to
// raise after its own check of the records; any other is internal (the rules and the policy
// disagree).
func (ans *planAnswer) refused(doc **C.char, err error) C.int {
	if ae := (*provider.ArgError)(nil); errors.As(err, &ae) {
		ans.SettingsError = ae
		return succeed(doc, ans)
	}
	return fail(doc, "tabscreen_error_internal", err)
}

// countFields counts the blank titles and abstracts and the characters the estimate counts.
func countFields(r engine.Records) *fieldCounts {
	f := &fieldCounts{Records: len(r.Titles)}
	for i := range r.Titles {
		tn, tb := screen.FieldChars(r.Titles[i], r.TitleValid == nil || r.TitleValid[i])
		an, ab := screen.FieldChars(r.Abstracts[i], r.AbstractValid == nil || r.AbstractValid[i])
		f.Chars += float64(tn + an)
		f.TitleBlank += b2i(tb)
		f.AbstractBlank += b2i(ab)
		f.EitherBlank += b2i(tb || ab)
		f.BothBlank += b2i(tb && ab)
	}
	return f
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// estimates are the estimate of a call as its run goes (Cache as asked), without the prompt
// caches, and through the batch APIs: the three prices screen_plan() shows.
func estimates(in screen.EstimateInput) map[string][]screen.EstimateRow {
	out := map[string][]screen.EstimateRow{}
	for _, v := range []struct {
		name         string
		cache, batch bool
	}{{"sync", in.Cache, false}, {"no_cache", false, false}, {"batch", in.Cache, true}} {
		e := in
		e.Cache, e.Batch = v.cache, v.batch
		out[v.name] = screen.Estimate(e)
	}
	return out
}

// withSettings puts each model's settings into the run options as R puts them before a run: the
// fields of the provider's model_fields, from the settings document R is sent.
func withSettings(d provider.Descriptor, opts *engine.Options, settings []json.RawMessage) error {
	if len(opts.Models) != len(settings) {
		return fmt.Errorf("the run options have %d models, the settings %d", len(opts.Models), len(settings))
	}
	for i, s := range settings {
		var byName map[string]json.RawMessage
		if err := json.Unmarshal(s, &byName); err != nil {
			return err
		}
		for k := range byName {
			if !slices.Contains(d.ModelFields, k) {
				delete(byName, k)
			}
		}
		b, err := json.Marshal(byName)
		if err != nil {
			return err
		}
		if err := json.Unmarshal(b, &opts.Models[i]); err != nil {
			return err
		}
	}
	return nil
}

type probeRequest struct {
	Provider string          `json:"provider"`
	APIURL   string          `json:"api_url"`
	Model    string          `json:"model"`
	Rules    json.RawMessage `json:"rules"`
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
	info, err := engine.Probe(context.Background(), d, req.APIURL, provider.PolicyModel{Name: req.Model, Rules: req.Rules},
		C.GoString(apiKey))
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
