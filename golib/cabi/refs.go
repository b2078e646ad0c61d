package main

/*
#include <stdlib.h>
*/
import "C"

import (
	"encoding/json"
	"errors"
	"fmt"
	"unsafe"

	"github.com/tabscreen/tabscreen/golib/arrowio"
	"github.com/tabscreen/tabscreen/golib/refs"
)

type refsRequest struct {
	Op    string            `json:"op"` // read, dedup, columns
	Path  string            `json:"path"`
	Read  refs.Options      `json:"read"`
	Dedup refs.DedupOptions `json:"dedup"`
	Names []string          `json:"names"`
}

// TsRefs serves read_refs(), dedup_refs() and write_refs(): "read" parses the file at path into a
// table (*out); "dedup" finds the duplicate groups of the records table (in, inLen) and returns
// them as a table; "columns" maps column names to read_refs()'s named columns. A file that cannot
// be read is an error document whose "refs" member says where and why, for R's message.
//
//export TsRefs
func TsRefs(request *C.char, in unsafe.Pointer, inLen C.size_t, out *unsafe.Pointer, outLen *C.size_t) (result *C.char) {
	defer recovered(&result)
	*out, *outLen = nil, 0
	var req refsRequest
	if err := json.Unmarshal([]byte(C.GoString(request)), &req); err != nil {
		return cError("tabscreen_error_internal", fmt.Errorf("refs request is not valid JSON: %v", err))
	}
	switch req.Op {
	case "columns":
		return cJSON(map[string]any{"names": refs.ColumnNames(req.Names)})
	case "read":
		var res *refs.Result
		var err error
		bulkGC(func() { res, err = refs.ReadFile(req.Path, req.Read) })
		if err != nil {
			return refsError(err)
		}
		if err := cTable(res.Table, out, outLen); err != nil {
			return cError("tabscreen_error_ipc", err)
		}
		return cJSON(map[string]any{"format": res.Format, "delimiter": res.Delimiter,
			"header_line": res.HeaderLine, "text_columns": nonNil(res.TextColumns)})
	case "dedup":
		table, err := arrowio.Decode(goBytes(in, inLen))
		if err != nil {
			return cError("tabscreen_error_ipc", err)
		}
		groups, summary, err := refs.Dedup(table, req.Dedup)
		if err != nil {
			return cError("tabscreen_error_refs", err)
		}
		if err := cTable(groups, out, outLen); err != nil {
			return cError("tabscreen_error_ipc", err)
		}
		return cJSON(summary)
	}
	return cError("tabscreen_error_internal", fmt.Errorf("unknown refs operation %q", req.Op))
}

// refsError is the error document of a file that cannot be read, with the details R words.
func refsError(err error) *C.char {
	var re *refs.Error
	if errors.As(err, &re) {
		return cJSON(map[string]any{"error": map[string]any{"class": re.Class, "message": re.Error(), "refs": re}})
	}
	// The file could not be opened or read (it vanished, permissions changed since R checked).
	return cJSON(map[string]any{"error": map[string]any{"class": "tabscreen_error_refs_files", "message": err.Error()}})
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
