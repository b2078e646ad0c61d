package provider

import (
	"fmt"
	"sort"
	"sync"
)

// Descriptor is everything the rest of the library knows about a provider: the engine, the C ABI
// and R look a provider up here and never branch on its name.
type Descriptor struct {
	// Protocol names the wire protocol ("openai", "anthropic", "mistral").
	Protocol string
	// Letter is the provider's name in the run options and in R ("a", "b", "c").
	Letter string
	// New builds the run's adapter.
	New func(Settings) (Adapter, error)
	// Hidden keeps a provider out of All (test-only adapters).
	Hidden bool
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
