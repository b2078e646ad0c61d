package fakeprovider

import (
	"net/http"
	"sort"
	"time"
)

// protocol is one provider wire protocol. The server does routing, limits,
// faults, latency and counting; a protocol authenticates, validates and
// reads a request, and writes answers and errors in its own format.
// To add one, implement this interface in its own files and register it
// there (registerProtocol, in an init). A protocol may also implement
// requestIDNamer, pathOwner and faultGiver.
type protocol interface {
	// name is a short identifier ("openai").
	name() string
	// match reports whether the path is this protocol's chat endpoint.
	match(path string) bool
	// chatPath is the chat endpoint's path on the fake (a batch's lines are run through it).
	chatPath() string
	// apiKey returns the credential the request carries ("" if none).
	apiKey(r *http.Request) string
	// parse validates a request body (already read) and extracts what the
	// fake needs, or returns the 4xx failure the real service would give.
	parse(r *http.Request, body []byte, cfg *runtimeConfig) (*chatRequest, *failure)
	// writeFailure writes an error response.
	writeFailure(w http.ResponseWriter, f *failure)
	// writeAnswer writes a 200 answer (possibly one of the 200-status faults).
	writeAnswer(w http.ResponseWriter, req *chatRequest, a *answer)
	// setRateHeaders sets the rate-limit headers of a response.
	setRateHeaders(h http.Header, s rateSnapshot)
}

type protocolMaker struct {
	make     func() (protocol, error)
	fallback bool
}

var protocolMakers []protocolMaker

// registerProtocol adds a protocol to every server. A fallback protocol is
// matched after the others (its endpoint's suffix may end another's path, as
// OpenAI's /chat/completions ends Mistral's) and words the 404 of a path no
// protocol owns.
func registerProtocol(fallback bool, make func() (protocol, error)) {
	protocolMakers = append(protocolMakers, protocolMaker{make, fallback})
}

// newProtocols returns the protocols the server speaks, in match order: by
// name, the fallback last.
func newProtocols() ([]protocol, error) {
	type entry struct {
		p        protocol
		fallback bool
	}
	es := make([]entry, len(protocolMakers))
	for i, m := range protocolMakers {
		p, err := m.make()
		if err != nil {
			return nil, err
		}
		es[i] = entry{p, m.fallback}
	}
	sort.Slice(es, func(i, j int) bool {
		if es[i].fallback != es[j].fallback {
			return es[j].fallback
		}
		return es[i].p.name() < es[j].p.name()
	})
	out := make([]protocol, len(es))
	for i, e := range es {
		out[i] = e.p
	}
	return out, nil
}

// requestIDNamer is implemented by protocols whose request id travels in
// another header than x-request-id.
type requestIDNamer interface {
	requestIDHeader() string
}

func requestIDHeader(p protocol) string {
	if n, ok := p.(requestIDNamer); ok {
		return n.requestIDHeader()
	}
	return "x-request-id"
}

// pathOwner is implemented by protocols that answer a 404 for unknown paths
// of their own (e.g. everything under /mistral/). Other unknown paths get
// the fallback protocol's 404.
type pathOwner interface {
	owns(path string) bool
}

// faultGiver is implemented by protocols that give a fault kind of their own
// (faultElsewhere), which the others replace by the nearest common kind.
type faultGiver interface {
	gives(kind string) bool
}

// faultElsewhere maps the fault kinds of one protocol to the kind the others give instead.
var faultElsewhere = map[string]string{Fault529: Fault503, FaultFinishError: Fault500}

// protocolFault returns the fault a protocol gives for a chosen kind. Counters
// count the kind given.
func protocolFault(p protocol, kind string) string {
	if common, special := faultElsewhere[kind]; special {
		if g, ok := p.(faultGiver); !ok || !g.gives(kind) {
			return common
		}
	}
	return kind
}

// failureKind says what went wrong, independently of how a protocol words it.
type failureKind int

const (
	failInvalidRequest  failureKind = iota // 400: body or parameters invalid
	failMissingKey                         // 401: no credential
	failInvalidKey                         // 401: credential declared invalid
	failNotFound                           // 404: unknown path
	failMethod                             // 405: wrong method
	failTooLarge                           // 413: body too large
	failRateLimit                          // 429: over the request rate (enforced or injected)
	failConcurrency                        // 429: too many requests in flight
	failQuota                              // 429: out of quota, do not retry
	failServer                             // 500
	failBadGateway                         // 502
	failUnavailable                        // 503
	failTimeout                            // 504
	failValidation                         // 422: body does not match the schema (Mistral)
	failOverloaded                         // 529: overloaded (Anthropic)
	failFlexUnavailable                    // 429: flex processing has no capacity now (OpenAI)
)

// failure is an error response before the protocol words it.
type failure struct {
	kind       failureKind
	message    string // for failInvalidRequest (and others where useful)
	param      string // offending parameter, "" for none
	code       string // protocol error code, "" for the protocol's default
	retryAfter time.Duration
	hasRetry   bool   // send retry headers
	key        string // failInvalidKey: the key (protocols may echo a masked form)
	limit      int64  // failRateLimit: the enforced limit per minute
	tokens     bool   // failRateLimit: the limit is on tokens per minute, not requests
	used       int64  // tokens: the tokens counted in the last minute
	requested  int64  // tokens: the request's own prompt tokens
	model      string // tokens: the requested model
	detail     any    // failValidation: a FastAPI-style list of errors (nil: a message)
}

// chatRequest is what the fake needs from a valid request, in any protocol.
type chatRequest struct {
	model      string
	userText   string // text of the user messages, joined
	promptSize int    // characters of prompt text (messages + tool definitions)
	messages   int
	tool       *toolDef // the tool to call; nil: answer with text
	forced     bool     // the request forces this tool by name
	seed       *int64   // the request's own seed, if any
	choices    int      // number of answers asked for (n)
	thinking   bool     // Anthropic: the model thinks (a thinking block precedes the answer)
	effort     string   // Mistral: the requested reasoning_effort ("" if none)
	argsObject bool     // Mistral: send tool arguments as a JSON object, not a string
	flex       bool     // OpenAI: service_tier "flex"

	cache         []cachePoint // prefixes the provider may cache (cache.go)
	cacheExplicit bool         // the request writes its last point (Anthropic)
	cacheRead     int          // tokens read from the cache, looked up on arrival
	cacheWrite    int          // tokens written to the cache
}

// toolDef is a function tool the fake calls.
type toolDef struct {
	name   string
	schema map[string]any // JSON Schema of the arguments (numbers as json.Number)
}

// answer is what the fake says, before the protocol writes it.
type answer struct {
	id               string // response id seed
	created          int64
	model            string
	fault            string   // "", or a 200-status fault kind
	args             []string // per choice: tool arguments (JSON text, or invalid for bad_args)
	callIDs          []string
	text             string // for text answers
	promptTokens     int
	completionTokens int
	cachedTokens     int
	cacheWriteTokens int
	reasoningTokens  int
}
