package main

/*
#include <stdlib.h>
#include <stdint.h>
*/
import "C"

import (
	"context"
	"fmt"

	"github.com/tabscreen/tabscreen/golib/engine"
)

type batchRequest struct {
	Op    string `json:"op"` // cancel
	Path  string `json:"path"`
	RunID string `json:"run_id"`
}

// TsBatch acts on the batches of a batch screening's run (a batch screening itself runs through
// TsRunStart with the run option "batch"): op "cancel" asks the provider to cancel the run's open
// batches. The key travels on its own.
//
//export TsBatch
func TsBatch(request *C.char, apiKey *C.char, doc **C.char) (status C.int) {
	defer recovered(&status, doc)
	var req batchRequest
	if err := decodeStrict("batch request", []byte(C.GoString(request)), &req); err != nil {
		return fail(doc, "tabscreen_error_internal", err)
	}
	switch req.Op {
	case "cancel":
		n, err := engine.CancelBatches(context.Background(), req.Path, req.RunID, C.GoString(apiKey))
		if err != nil {
			return storeErr(doc, err)
		}
		return succeed(doc, map[string]any{"cancelled": n})
	}
	return fail(doc, "tabscreen_error_internal", fmt.Errorf("unknown batch operation %q", req.Op))
}
