// Package spec embeds the parts of the providers' published API specifications
// that the fake provider validates against. See README.md for the sources.
// (Anthropic publishes no OpenAPI document; its Messages request is checked
// field by field in package fakeprovider.)
//
// Why an extract and not the whole OpenAPI document: the upstream openapi.yaml
// is 3 MB of YAML covering the whole OpenAI API (Mistral's: 1 MB). Embedding it would need a YAML
// parser in the tabscreen module, add ~3 MB to the binary and cost a YAML parse
// at every start of the fake (the R tests start it many times). The schemas
// reachable from the roots below are ~70 kB (Mistral: ~45 kB) of JSON that encoding/json
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

//go:generate go run -C gen . -in ../../../../../shared/specs/mistral-chat-completions/openapi.yaml -out ../mistral-chat-completions.json -roots ChatCompletionRequest,ChatCompletionResponse,HTTPValidationError -source "Upstream: mistralai/platform-docs-public@222f4ba9114f84ce9f2d718b9a12fbac1e527f4b openapi-public-doc.yaml (Apache-2.0, see LICENSE-mistral); schemas copied unchanged, the others left out."

// MistralChatCompletions is a JSON document whose components.schemas hold
// ChatCompletionRequest, ChatCompletionResponse, HTTPValidationError and
// every schema they reference, as published by Mistral AI.
//
//go:embed mistral-chat-completions.json
var MistralChatCompletions []byte
