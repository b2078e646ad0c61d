package main

/*
#include <stdlib.h>
#include <stdint.h>
*/
import "C"

import (
	"context"
	"fmt"
	"os"
	"unsafe"

	"github.com/tabscreen/tabscreen/golib/review"
	"github.com/tabscreen/tabscreen/golib/store"
)

// TsReviewServe serves the review page of screen_review() until the calling process's standard
// input closes or the reviewer presses Finish. Like TsFakeServe it runs in a child R process that
// loads only the package's DLL, so the server answers while the user's session is busy and the
// user's signal handlers never meet its threads. Blocks until then.
//
//export TsReviewServe
func TsReviewServe(options *C.char, doc **C.char) (status C.int) {
	defer recovered(&status, doc)
	var opts review.Options
	if err := decodeStrict("review options", []byte(C.GoString(options)), &opts); err != nil {
		return fail(doc, "tabscreen_error_internal", err)
	}
	opts.Stdin = os.Stdin
	if err := review.Serve(context.Background(), opts); err != nil {
		return storeErr(doc, err)
	}
	return succeed(doc, struct{}{})
}

type reviewRequest struct {
	Op    string `json:"op"` // decisions, audit, stored_audit
	Path  string `json:"path"`
	RunID string `json:"run_id"`
	Seed  int64  `json:"seed"`
	Size  int    `json:"size"`
}

// TsReview reads a run's review decisions as a table, or fixes its audit sample (seed and size),
// for screen_review() and its siblings in the user's R session.
//
//export TsReview
func TsReview(request *C.char, out *unsafe.Pointer, outLen *C.size_t, doc **C.char) (status C.int) {
	defer recovered(&status, doc)
	*out, *outLen = nil, 0
	var req reviewRequest
	if err := decodeStrict("review request", []byte(C.GoString(request)), &req); err != nil {
		return fail(doc, "tabscreen_error_internal", err)
	}
	st, err := store.Open(req.Path)
	if err != nil {
		return storeErr(doc, err)
	}
	defer st.Close()
	switch req.Op {
	case "decisions":
		table, err := st.DecisionsTable(req.RunID)
		if err != nil {
			return storeErr(doc, err)
		}
		if err := cTable(table, out, outLen); err != nil {
			return fail(doc, "tabscreen_error_ipc", err)
		}
		return succeed(doc, map[string]any{"path": st.Path})
	case "audit":
		spec, err := st.Audit(req.RunID, req.Seed, req.Size)
		if err != nil {
			return storeErr(doc, err)
		}
		return succeed(doc, spec)
	case "stored_audit":
		spec, ok, err := st.StoredAudit(req.RunID)
		if err != nil {
			return storeErr(doc, err)
		}
		if !ok {
			return succeed(doc, map[string]any{})
		}
		return succeed(doc, spec)
	}
	return fail(doc, "tabscreen_error_internal", fmt.Errorf("unknown review operation %q", req.Op))
}
