package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/tabscreen/tabscreen/golib/engine"
)

// decodeStrict reads the JSON document that R sent as `what` into v, refusing a key v has no field
// for and anything after the document. R and Go are built together: a key Go does not know is a
// misspelling or a field one side forgot, which a lenient decode would silently drop. Its error is
// an internal one (tabscreen_error_internal), not the user's.
func decodeStrict(what string, doc []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil {
		if _, end := dec.Token(); !errors.Is(end, io.EOF) {
			err = errors.New("data after the document")
		}
	}
	if err != nil {
		return fmt.Errorf("the %s from R could not be read: %v", what, err)
	}
	return nil
}

// runOptions reads and checks the run options of TsRunStart and of TsPlan's holding; R
// checks every option first, so either failure is an internal error.
func runOptions(doc []byte) (*engine.Options, error) {
	o := engine.NewOptions()
	if err := decodeStrict("run options", doc, o); err != nil {
		return nil, err
	}
	if err := o.Check(); err != nil {
		return nil, err
	}
	return o, nil
}
