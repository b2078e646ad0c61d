// Package fakeprovider is a fake LLM provider for tests, examples and demos:
// an HTTP server that speaks a provider's wire protocol strictly, answers
// every valid request with a tool call whose arguments it derives from the
// request's own tool schema, and injects the failures a real service shows
// (rate limits, quota, 5xx, hangs, dropped connections, malformed bodies).
//
// It is an independent check of tabscreen's client, so it shares no code with
// golib/engine, golib/provider, golib/screen or golib/cabi: it knows no model
// table and no field name of the client's tools. What a request must look like
// comes from the provider's published specification (package spec) plus the
// few rules the specification cannot express.
//
// Layout: the protocol-neutral server (routing, limits, faults, latency,
// counters) lives in server.go, chat.go, limits.go, stats.go, config.go,
// args.go and random.go; each wire protocol is one protocol implementation in
// its own files, registered there (protocol.go says how to add one). One
// server speaks all three protocols, chosen by the path:
//
//	POST .../v1/messages                    Anthropic Messages (anthropic*.go; provider B;
//	                                        headers x-api-key and anthropic-version)
//	POST /mistral/.../chat/completions      Mistral chat completions (mistral*.go; provider C;
//	                                        e.g. /mistral/v1/chat/completions)
//	POST .../chat/completions (any other)   OpenAI Chat Completions (openai*.go; provider A;
//	                                        e.g. /v1/chat/completions)
//
// Configuration, faults, limits and counters are shared; GET /_fake/stats
// also splits the counts by protocol (by_protocol). Fault kinds that only one
// protocol has become the nearest common kind in the others: "529" is a 503
// but for Anthropic, "finish_error" a 500 but for Mistral.
//
// Endpoints besides the protocols' own:
//
//	GET  /_fake/health    "ok"
//	GET  /_fake/stats     counters (see Stats)
//	POST /_fake/reset     zero the counters
//	GET  /_fake/config    the configuration in force
//	POST /_fake/config    change some settings (JSON object, keys as in Config)
//	GET  /_fake/requests  the last requests received (?n=10), keys redacted
//	GET  /_fake/protocols each protocol's chat path (R builds the providers' URLs from it)
package fakeprovider
