package main

/*
#include <stdlib.h>
#include <stdint.h>
*/
import "C"

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/tabscreen/tabscreen/golib/arrowio"
	"github.com/tabscreen/tabscreen/golib/store"
)

type storeRequest struct {
	Op    string   `json:"op"` // runs, answers, log, batches, delete, recover
	Path  string   `json:"path"`
	RunID []string `json:"run_id"`
	To    string   `json:"to"` // recover: the new file
}

// tableRecovery is one table of a recovery's summary; lost is null when it cannot be counted.
type tableRecovery struct {
	Table  string `json:"table"`
	Copied int64  `json:"copied"`
	Lost   *int64 `json:"lost"`
	Exact  bool   `json:"exact"`
}

// TsStore reads or edits an answer store for screen_store() and its siblings: the runs, one
// run's answers or audit log as a table, or the deletion of runs.
//
//export TsStore
func TsStore(request *C.char, out *unsafe.Pointer, outLen *C.size_t, doc **C.char) (status C.int) {
	defer recovered(&status, doc)
	*out, *outLen = nil, 0
	var req storeRequest
	if err := decodeStrict("store request", []byte(C.GoString(request)), &req); err != nil {
		return fail(doc, "tabscreen_error_internal", err)
	}
	if req.Op == "recover" {
		// The damaged file is read only: it is never opened as a store.
		summary, err := store.Recover(req.Path, req.To)
		if err != nil {
			return storeErr(doc, err)
		}
		tables := make([]tableRecovery, len(summary))
		for i, r := range summary {
			tables[i] = tableRecovery{Table: r.Table, Copied: r.Copied, Exact: r.Exact}
			if r.Lost >= 0 {
				tables[i].Lost = &summary[i].Lost
			}
		}
		return succeed(doc, map[string]any{"tables": tables})
	}
	st, err := store.Open(req.Path)
	if err != nil {
		return storeErr(doc, err)
	}
	defer st.Close()
	// What the store holds includes the answers kept from a call whose writes failed, once it
	// can take them; until then it lists what it holds (the next screening call says why not).
	_, _ = st.WriteKept()
	var table *arrowio.Table
	switch req.Op {
	case "runs":
		table, err = st.Runs()
	case "answers", "log":
		if len(req.RunID) != 1 {
			return fail(doc, "tabscreen_error_internal", fmt.Errorf("one run id is needed"))
		}
		if req.Op == "answers" {
			table, err = st.Answers(req.RunID[0])
		} else {
			table, err = st.Log(req.RunID[0])
		}
	case "batches":
		id := ""
		if len(req.RunID) == 1 {
			id = req.RunID[0]
		}
		table, err = st.Batches(id)
	case "delete":
		n, err := st.Delete(req.RunID)
		if err != nil {
			return storeErr(doc, err)
		}
		return succeed(doc, map[string]any{"deleted": n, "path": st.Path})
	default:
		return fail(doc, "tabscreen_error_internal", fmt.Errorf("unknown store operation %q", req.Op))
	}
	if err != nil {
		return storeErr(doc, err)
	}
	if err := cTable(table, out, outLen); err != nil {
		return fail(doc, "tabscreen_error_ipc", err)
	}
	return succeed(doc, map[string]any{"path": st.Path})
}

func storeErr(doc **C.char, err error) C.int {
	var se *store.Error
	if errors.As(err, &se) {
		return fail(doc, se.Class, err)
	}
	return fail(doc, "tabscreen_error_store", err)
}
