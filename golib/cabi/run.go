package main

/*
#include <stdlib.h>
#include <stdint.h>
*/
import "C"

import (
	"errors"
	"fmt"
	"net/http"
	"runtime/debug"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/tabscreen/tabscreen/golib/arrowio"
	"github.com/tabscreen/tabscreen/golib/engine"
	"github.com/tabscreen/tabscreen/golib/provider"
	"github.com/tabscreen/tabscreen/golib/screen"
	"github.com/tabscreen/tabscreen/golib/store"
)

// Runs are reached from C through integer handles, so no Go pointer ever crosses the ABI.
var (
	runsMu     sync.Mutex
	runs       = map[int64]*engine.Run{}
	nextHandle int64
)

func lookup(h C.int64_t) (*engine.Run, error) {
	runsMu.Lock()
	defer runsMu.Unlock()
	r, ok := runs[int64(h)]
	if !ok {
		return nil, fmt.Errorf("no run with handle %d (it has already returned its result)", int64(h))
	}
	return r, nil
}

func textColumn(t *arrowio.Table, name string) ([]string, []bool, error) {
	c, ok := t.Col(name)
	if !ok || c.Kind != arrowio.KindUtf8 {
		return nil, nil, fmt.Errorf("the records table needs a character column %q", name)
	}
	return c.Str, c.Valid, nil
}

// recordsOf reads the records table of a run (ARCHITECTURE.md, "Tables and run options").
func recordsOf(table *arrowio.Table) (engine.Records, error) {
	titles, titleValid, err := textColumn(table, "title")
	if err != nil {
		return engine.Records{}, err
	}
	abstracts, abstractValid, err := textColumn(table, "abstract")
	if err != nil {
		return engine.Records{}, err
	}
	recs := engine.Records{Titles: titles, Abstracts: abstracts, TitleValid: titleValid, AbstractValid: abstractValid}
	if c, ok := table.Col("studyid"); ok && c.Kind == arrowio.KindUtf8 {
		recs.StudyIDs = make([]string, len(c.Str))
		for i, id := range c.Str {
			recs.StudyIDs[i] = strings.Clone(id) // kept for the store, past this call
		}
	}
	return recs, nil
}

// freeAfterRecords is the size of a records table (bytes of its IPC stream) above which a run's
// start returns the memory of its setting up to the system.
const freeAfterRecords = 64 << 20

// freeAfterJobs is the number of jobs above which a run's result returns memory to the system
// between its steps.
const freeAfterJobs = 50_000

// TsRunStart starts a run; on success *doc is {"handle": n, "store": ...}.
//
//export TsRunStart
func TsRunStart(records unsafe.Pointer, recordsLen C.size_t, options *C.char, apiKey *C.char, doc **C.char) (status C.int) {
	defer recovered(&status, doc)
	startProfile()
	var table *arrowio.Table
	var err error
	// Read in place, in R's memory, which stays put for the call: the run keeps the questions it
	// builds from the text, not the text (the study ids are cloned below).
	table, err = arrowio.View(cView(records, recordsLen))
	if err != nil {
		return fail(doc, "tabscreen_error_ipc", err)
	}
	opts, err := runOptions([]byte(C.GoString(options)))
	if err != nil {
		return fail(doc, "tabscreen_error_internal", err)
	}
	recs, err := recordsOf(table)
	if err != nil {
		return fail(doc, "tabscreen_error_ipc", err)
	}
	registerTestAdapters()
	run, err := engine.Start(opts, recs, C.GoString(apiKey))
	if se := (*store.Error)(nil); errors.As(err, &se) {
		return storeErr(doc, err)
	}
	if err != nil {
		return fail(doc, "tabscreen_error_internal", err)
	}
	runsMu.Lock()
	nextHandle++
	h := nextHandle
	runs[h] = run
	runsMu.Unlock()
	// The decoded records are garbage now that the questions hold their text: hand the memory
	// back before the run adds its own. A small screening's is not worth the forced collection
	// and the memory's return to the system (a few percent of a 10,000-job run's CPU): its heap is
	// bounded by the limit below anyway.
	table, recs = nil, engine.Records{}
	if recordsLen > freeAfterRecords {
		debug.FreeOSMemory()
	}
	limitRunHeap(h)
	memPhase("run started")
	return succeed(doc, map[string]any{"handle": h, "store": run.StoreInfo()})
}

// TsRunPoll reports a run's progress once it has finished or posted a callback for R, or after
// wait seconds: R's loop waits here rather than in Sys.sleep(), so that it sees the end of a run
// when it comes, not up to a poll interval later.
//
//export TsRunPoll
func TsRunPoll(handle C.int64_t, wait C.double, doc **C.char) (status C.int) {
	defer recovered(&status, doc)
	run, err := lookup(handle)
	if err != nil {
		return fail(doc, "tabscreen_error_handle", err)
	}
	return succeed(doc, run.PollWithin(time.Duration(float64(wait)*float64(time.Second))))
}

//export TsRunReply
func TsRunReply(handle C.int64_t, replies *C.char, doc **C.char) (status C.int) {
	defer recovered(&status, doc)
	var rs []engine.CallbackReply
	if err := decodeStrict("callback replies", []byte(C.GoString(replies)), &rs); err != nil {
		return fail(doc, "tabscreen_error_internal", err)
	}
	run, err := lookup(handle)
	if err != nil {
		return fail(doc, "tabscreen_error_handle", err)
	}
	run.Reply(rs)
	return succeed(doc, map[string]int{"replied": len(rs)})
}

//export TsRunCancel
func TsRunCancel(handle C.int64_t) {
	defer func() { _ = recover() }()
	if run, err := lookup(handle); err == nil {
		run.Cancel()
	}
}

// TsRunResult waits for the run to end, hands over its tables and forgets the handle: the rows
// (this call's jobs, with the rows of an earlier result merged in when merge holds them), their
// aggregation when the options ask for it, and the fields the questions hold otherwise than R sent
// them (engine.Run.Reworded): R puts the questions together from its own text, the frame in the
// metadata and these, so that no text R sent comes back.
//
//export TsRunResult
func TsRunResult(handle C.int64_t, merge unsafe.Pointer, mergeLen C.size_t, rows *unsafe.Pointer, rowsLen *C.size_t,
	aggregated *unsafe.Pointer, aggregatedLen *C.size_t, reworded *unsafe.Pointer, rewordedLen *C.size_t,
	doc **C.char) (status C.int) {
	defer recovered(&status, doc)
	defer stopProfile()
	outs := []*unsafe.Pointer{rows, aggregated, reworded}
	lens := []*C.size_t{rowsLen, aggregatedLen, rewordedLen}
	for i := range outs {
		*outs[i], *lens[i] = nil, 0
	}
	run, err := lookup(handle)
	if err != nil {
		return fail(doc, "tabscreen_error_handle", err)
	}
	run.Wait()
	unlimitRunHeap(int64(handle))
	// A large run's memory goes back to the system between the steps below, or at a million jobs
	// their peaks would add up; a small run's result is not worth the forced collections (about
	// 30 ms at 6,000 jobs, which a user waits for on every call).
	free := func() {}
	if run.Jobs() >= freeAfterJobs {
		free = debug.FreeOSMemory
	}
	// The run's last garbage (request and response bodies) goes back before the result tables
	// are made.
	free()
	memPhase("run finished")
	var mergeTable *arrowio.Table
	if mergeLen > 0 {
		if mergeTable, err = arrowio.Decode(cView(merge, mergeLen)); err != nil {
			return fail(doc, "tabscreen_error_ipc", err)
		}
	}
	// One table at a time into C memory, each dropped from Go's as soon as it is there: with a
	// million rows the tables would otherwise sit in both. The reworded fields go first, then the
	// questions they are slices of: the largest thing the run holds, and the rows are built from
	// the store without them.
	freeOuts := func(upTo int) {
		for k := 0; k < upTo; k++ {
			C.free(*outs[k])
			*outs[k], *lens[k] = nil, 0
		}
	}
	if err := cTable(run.Reworded(), outs[2], lens[2]); err != nil {
		return fail(doc, "tabscreen_error_ipc", err)
	}
	run.ForgetQuestions()
	free()
	memPhase("questions dropped")
	rowsTable, aggTable, err := run.Result(mergeTable)
	memPhase("rows built")
	if err != nil {
		freeOuts(3)
		return storeErr(doc, err)
	}
	if err := cTable(rowsTable, outs[0], lens[0]); err != nil {
		freeOuts(3)
		return fail(doc, "tabscreen_error_ipc", err)
	}
	rowsTable = nil
	free()
	memPhase("rows encoded")
	if aggTable != nil {
		if err := cTable(aggTable, outs[1], lens[1]); err != nil {
			freeOuts(3)
			return fail(doc, "tabscreen_error_ipc", err)
		}
	}
	summary := run.Summarise()
	if err := run.Release(); err != nil {
		return fail(doc, "tabscreen_error_store", err)
	}
	runsMu.Lock()
	delete(runs, int64(handle))
	runsMu.Unlock()
	run.Forget()
	// R builds its result next; give back what the run used so the two peaks do not add up.
	free()
	memPhase("result handed over")
	return succeed(doc, summary)
}

type aggregateOptions struct {
	Upper *float64 `json:"incl_cutoff_upper"`
	Lower *float64 `json:"incl_cutoff_lower"`
}

// TsAggregate runs spec section 3 over an answers table; a screening aggregates its own rows in
// TsRunResult. Test-only (testSwitch): the aggregation tests and the Windows check.
//
//export TsAggregate
func TsAggregate(answers unsafe.Pointer, answersLen C.size_t, options *C.char, out *unsafe.Pointer, outLen *C.size_t,
	doc **C.char) (status C.int) {
	defer recovered(&status, doc)
	*out, *outLen = nil, 0
	if status, ok := testOnly("TsAggregate", doc); !ok {
		return status
	}
	var o aggregateOptions
	if err := decodeStrict("aggregation options", []byte(C.GoString(options)), &o); err != nil {
		return fail(doc, "tabscreen_error_internal", err)
	}
	table, err := arrowio.Decode(cView(answers, answersLen))
	if err != nil {
		return fail(doc, "tabscreen_error_ipc", err)
	}
	cut := screen.EffectiveCutoffs(o.Upper, o.Lower)
	agg, err := engine.AggregateTable(table, cut)
	if err != nil {
		return fail(doc, "tabscreen_error_ipc", err)
	}
	if err := cTable(agg, out, outLen); err != nil {
		return fail(doc, "tabscreen_error_ipc", err)
	}
	return succeed(doc, map[string]float64{"incl_cutoff_upper": cut.Upper, "incl_cutoff_lower": cut.Lower})
}

// TsIsTransient applies the engine's retry rule to one response: llm_is_transient() in R is this
// rule, so that a user's predicate and the engine's default agree.
//
//export TsIsTransient
func TsIsTransient(httpStatus C.int, headers *C.char, body unsafe.Pointer, bodyLen C.size_t, doc **C.char) (status C.int) {
	defer recovered(&status, doc)
	var h map[string]string
	if err := decodeStrict("response headers", []byte(C.GoString(headers)), &h); err != nil {
		return fail(doc, "tabscreen_error_internal", err)
	}
	header := http.Header{}
	for k, v := range h {
		header.Set(k, strings.TrimSpace(v))
	}
	return succeed(doc, map[string]bool{"transient": provider.IsTransient(int(httpStatus), header, goBytes(body, bodyLen))})
}
