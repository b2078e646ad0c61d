// Package spec embeds the parts of the providers' published API specifications
// that the fake provider validates against. See README.md for the sources.
//
// Why an extract and not the whole OpenAPI document: the upstream openapi.yaml
// is 3 MB of YAML covering the whole OpenAI API. Embedding it would need a YAML
// parser in the tabscreen module, add ~3 MB to the binary and cost a YAML parse
// at every start of the fake (the R tests start it many times). The schemas
// reachable from the three roots below are ~70 kB of JSON that encoding/json
// reads in about a millisecond. The extract is made by a small program
// (gen/, its own module so its YAML dependency stays out of ours), copies every
// reachable schema unchanged, and records the sha256 of its input, so it can be
// regenerated and diffed whenever the upstream document is updated:
//
//	go generate ./golib/fakeprovider/spec
package spec

import _ "embed"

//go:generate go run -C gen . -in ../../../../../shared/specs/openai-chat-completions/openapi.yaml -out ../openai-chat-completions.json -source "Upstream: openai/openai-openapi@f85dbe223d40e1a31cba812ab2d755c7e98a92a3 openapi.yaml (MIT, see LICENSE)."

// OpenAIChatCompletions is a JSON document whose components.schemas hold
// CreateChatCompletionRequest, CreateChatCompletionResponse, ErrorResponse and
// every schema they reference, as published by OpenAI.
//
//go:embed openai-chat-completions.json
var OpenAIChatCompletions []byte
