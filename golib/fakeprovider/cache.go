package fakeprovider

import (
	"encoding/json"
	"hash/fnv"
	"strings"
	"sync"
	"time"
)

// The prompt cache each protocol reports when Config.PromptCache is set. A request is read as a stream of
// text (tools, system, messages, in the order the providers cache them) about four characters a
// token; its cache points are prefixes of that stream that a later request may read:
//   - OpenAI: automatic, every 128-token step from 1,024 tokens on; usage
//     prompt_tokens_details.cached_tokens.
//   - Anthropic: only at cache_control breakpoints, and only from the model's minimum
//     (anthropicCacheMin); cache_creation_input_tokens for the part written, cache_read_input_tokens
//     for the longest prefix read.
//   - Mistral: like OpenAI, but only for requests with a prompt_cache_key, which enters the key.
//
// A prefix is looked up when the request arrives and becomes readable once its answer is written,
// so that requests in flight together cannot read one another's prefix; it stays for 5 minutes.

const (
	cacheTTL        = 5 * time.Minute
	autoCacheMin    = 1024
	autoCacheStep   = 128
	charsPerToken   = 4
	anthropicMinDef = 512
)

// anthropicCacheMin is the shortest cacheable prefix by model (name prefix), in tokens.
var anthropicCacheMin = []struct {
	prefix string
	tokens int
}{{"claude-haiku-4-5", 4096}, {"claude-sonnet-5-5", 512}, {"claude-opus-5-5", 512}, {"claude-haiku-5-5", 512},
	{"claude-sonnet-5", 1024}, {"claude-opus-5", 1024}, {"claude-fable", 1024}}

func anthropicMinTokens(model string) int {
	for _, m := range anthropicCacheMin {
		if strings.HasPrefix(model, m.prefix) {
			return m.tokens
		}
	}
	return anthropicMinDef
}

// cachePoint is a cacheable prefix of a request: its hash and its length in tokens.
type cachePoint struct {
	hash   uint64
	tokens int
}

// cacheStream hashes a request's text as it is written and records its cache points.
type cacheStream struct {
	h      interface{ Sum64() uint64 }
	w      func(string)
	chars  int
	points []cachePoint
}

// newCacheStream starts a stream under a key (the model, and a cache key where the protocol has one).
func newCacheStream(key string) *cacheStream {
	h := fnv.New64a()
	s := &cacheStream{h: h, w: func(t string) { _, _ = h.Write([]byte(t)) }}
	s.w(key)
	s.w("\x00")
	return s
}

// write adds text; with auto, a point at every step the text crosses.
func (s *cacheStream) write(text string, auto bool) {
	if !auto {
		s.w(text)
		s.chars += len(text)
		return
	}
	for len(text) > 0 {
		tokens := s.chars / charsPerToken
		next := autoCacheMin
		if tokens >= autoCacheMin {
			next = tokens - (tokens-autoCacheMin)%autoCacheStep + autoCacheStep
		}
		need := next*charsPerToken - s.chars
		if need > len(text) {
			s.w(text)
			s.chars += len(text)
			return
		}
		s.w(text[:need])
		s.chars += need
		text = text[need:]
		s.mark(0)
	}
}

// mark makes the text so far a cache point if it has at least min tokens.
func (s *cacheStream) mark(min int) {
	if t := s.chars / charsPerToken; t >= min && t > 0 {
		s.points = append(s.points, cachePoint{hash: s.h.Sum64(), tokens: t})
	}
}

// promptCache holds the prefixes answered recently, with when they expire.
type promptCache struct {
	mu   sync.Mutex
	seen map[uint64]time.Time
}

// lookup gives the tokens read from the cache (the longest point seen) and, where the protocol
// writes explicitly, those written (up to the last point).
func (c *promptCache) lookup(points []cachePoint, explicit bool, now time.Time) (read, written int) {
	if len(points) == 0 {
		return 0, 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := len(points) - 1; i >= 0; i-- {
		if exp, ok := c.seen[points[i].hash]; ok && now.Before(exp) {
			read = points[i].tokens
			break
		}
	}
	if explicit {
		written = max(points[len(points)-1].tokens-read, 0)
	}
	return read, written
}

// store makes a request's points readable (again) for cacheTTL.
func (c *promptCache) store(points []cachePoint, now time.Time) {
	if len(points) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seen == nil || len(c.seen) > 1<<20 {
		c.seen = make(map[uint64]time.Time)
	}
	for _, p := range points {
		c.seen[p.hash] = now.Add(cacheTTL)
	}
}

// chatCachePoints are the automatic points of a chat-completions request (tools, then the
// messages' text); key is "" for OpenAI, the prompt_cache_key for Mistral.
func chatCachePoints(body map[string]any, model, key string) []cachePoint {
	s := newCacheStream(model + "\x00" + key)
	tools, _ := json.Marshal(body["tools"])
	s.write(string(tools), true)
	msgs, _ := body["messages"].([]any)
	for _, m := range msgs {
		mm, _ := m.(map[string]any)
		s.write(contentText(mm["content"]), true)
	}
	return s.points
}

// anthropicCachePoints are the cache_control breakpoints of a Messages request, in the order the
// service caches: tools, system, messages.
func anthropicCachePoints(body map[string]any, model string) []cachePoint {
	s := newCacheStream(model)
	min := anthropicMinTokens(model)
	tools, _ := body["tools"].([]any)
	for _, t := range tools {
		b, _ := json.Marshal(t)
		s.write(string(b), false)
		if tm, _ := t.(map[string]any); tm["cache_control"] != nil {
			s.mark(min)
		}
	}
	blocks := func(content any) {
		switch c := content.(type) {
		case string:
			s.write(c, false)
		case []any:
			for _, b := range c {
				bm, _ := b.(map[string]any)
				text, _ := bm["text"].(string)
				s.write(text, false)
				if bm["cache_control"] != nil {
					s.mark(min)
				}
			}
		}
	}
	blocks(body["system"])
	msgs, _ := body["messages"].([]any)
	for _, m := range msgs {
		mm, _ := m.(map[string]any)
		blocks(mm["content"])
	}
	return s.points
}
