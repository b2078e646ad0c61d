package provider

import "strings"

// PanicTest is a test-only provider: provider A's adapter, except that building the request of a
// question that mentions PANIC panics, as a bug in an adapter would. It is not registered; the
// engine's tests and, when TABSCREEN_TESTING=1, the C ABI (for the R tests) register it to
// show that such a panic stops the run instead of the R session.
var PanicTest = Descriptor{Protocol: "test-panic", Letter: "test-panic", Hidden: true,
	New: func(s Settings) (Adapter, error) {
		a, err := New("a", s)
		return panicky{a}, err
	}}

type panicky struct{ Adapter }

func (p panicky) Request(c *Call) (Request, error) {
	if strings.Contains(c.Question, "PANIC") {
		panic("adapter bug")
	}
	return p.Adapter.Request(c)
}
