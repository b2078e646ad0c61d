package provider

import (
	"fmt"
	"net/url"
	"sort"
	"strings"
	"sync"
)

// Descriptor is everything the rest of the library knows about a provider: the engine, the C ABI
// and R (through TsProviders) look a provider up here and never branch on its name. The fields
// with JSON names are what R reads.
type Descriptor struct {
	// Protocol names the wire protocol ("openai", "anthropic", "mistral").
	Protocol string `json:"protocol"`
	// Letter is the provider's name in the run options and in R ("a", "b", "c").
	Letter string `json:"letter"`
	// Label names the provider in messages.
	Label string `json:"label"`
	// DefaultURL and DefaultModel are those of the provider's screening function.
	DefaultURL   string `json:"default_url"`
	DefaultModel string `json:"default_model"`
	// Path, when set, is appended to api_url unless it already ends in it (api_url is a base
	// URL); otherwise api_url is the endpoint itself.
	Path string `json:"path"`
	// KeyVar is the environment variable that holds the key.
	KeyVar string `json:"key_var"`
	// KeyFallbacks are the variables read, in order, when KeyVar is unset: where the provider's own
	// tools and AIscreenR keep the key.
	KeyFallbacks []string `json:"key_fallbacks"`
	// ToolFormat is the shape of a custom tool: "chat" (function tools) or "messages"; R checks
	// the user's tools against it (tool_format in R/check-args.R).
	ToolFormat string `json:"tool_format"`
	// ToolChoiceWords are the strings tool_choice takes as they are (nil: the provider's function
	// has no tool_choice argument).
	ToolChoiceWords []string `json:"tool_choice_words"`
	// RequestFields, when set, are the only fields the request schema allows: any other in `...`
	// is refused before the run, since the provider would refuse every request.
	RequestFields []string `json:"request_fields"`
	// Rate are the rate-limit headers.
	Rate RateHeaders `json:"-"`
	// WindowedRequests says the provider counts requests per second (rpm/60 in any second), so a
	// second's requests may go in its first third; otherwise they are spread evenly (a limit that
	// refills continuously and refuses sudden rises).
	WindowedRequests bool `json:"-"`
	// ModelFields are the fields of a model in the run options, after its name, reps and rpm: the
	// request settings the provider's policy decides and the prices it is charged at.
	ModelFields []string `json:"model_fields"`
	// SettingFields are the fields of ModelSettings the provider's policy decides.
	SettingFields []string `json:"-"`

	// New builds the run's adapter.
	New func(Settings) (Adapter, error) `json:"-"`
	// Policy decides each model's request fields from its rules and the user's arguments.
	Policy Policy `json:"-"`
	// Probe is the body of the smallest request to a model (rate_limits_per_minute()).
	Probe func(m PolicyModel) (any, error) `json:"-"`
	// CheckBody, when set, checks the names of the fields the user adds to the body (`...`)
	// against the models' rules; nil: any field the request schema allows goes to every model.
	CheckBody func(models []PolicyModel, fields []string) error `json:"-"`
	// Batch builds the provider's batch API (nil: the provider has none); HasBatch says so to R.
	Batch    func(Settings) BatchAPI `json:"-"`
	HasBatch bool                    `json:"batch"`
	// Hidden keeps a provider out of All (test-only adapters).
	Hidden bool `json:"-"`
}

// Endpoint is the URL the calls of a run with this api_url are posted to.
func (d Descriptor) Endpoint(apiURL string) string {
	if d.Path == "" {
		return apiURL
	}
	base := strings.TrimRight(apiURL, "/")
	if strings.HasSuffix(base, d.Path) {
		return base
	}
	return base + d.Path
}

// URLForm describes, for messages, the api_url the provider expects: a base URL to which Path is
// added, or the endpoint itself, ending as the default URL's path does.
func (d Descriptor) URLForm() string {
	if d.Path != "" {
		return fmt.Sprintf("a base URL such as %s (%s is added to it)", d.DefaultURL, d.Path)
	}
	if u, err := url.Parse(d.DefaultURL); err == nil && u.Path != "" && u.Path != "/" {
		return fmt.Sprintf("the full endpoint, ending in %s, such as %s", u.Path, d.DefaultURL)
	}
	return "a URL such as " + d.DefaultURL
}

var (
	registryMu sync.RWMutex
	registry   = map[string]Descriptor{}
)

// Register adds a provider. A letter or protocol already taken is a programming error.
func Register(d Descriptor) {
	registryMu.Lock()
	defer registryMu.Unlock()
	if d.Letter == "" || d.Protocol == "" || d.New == nil {
		panic(fmt.Sprintf("provider.Register: incomplete descriptor %q/%q", d.Letter, d.Protocol))
	}
	for _, name := range []string{d.Letter, d.Protocol} {
		if _, taken := registry[name]; taken {
			panic(fmt.Sprintf("provider.Register: %q is registered twice", name))
		}
	}
	d.HasBatch = d.Batch != nil
	registry[d.Letter] = d
	registry[d.Protocol] = d
}

// Lookup finds a provider by its letter or its protocol.
func Lookup(name string) (Descriptor, bool) {
	registryMu.RLock()
	defer registryMu.RUnlock()
	d, ok := registry[name]
	return d, ok
}

// All lists the providers that are not hidden, by letter.
func All() []Descriptor {
	registryMu.RLock()
	defer registryMu.RUnlock()
	var out []Descriptor
	for name, d := range registry {
		if name == d.Letter && !d.Hidden {
			out = append(out, d)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Letter < out[j].Letter })
	return out
}
