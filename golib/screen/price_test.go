package screen

import (
	"math"
	"testing"
)

func TestCachedTokensArePricedAtTheirOwnRates(t *testing.T) {
	haiku := Prices{In: 0.10, CachedIn: 0.01, CacheWrite: 0.125, Out: 0.50, HasIn: true, HasCachedIn: true,
		HasCacheWrite: true, HasOut: true}
	cases := []struct {
		name            string
		p               Prices
		u               Usage
		in, saving      float64
		ok, savingKnown bool
	}{
		{"no cache", haiku, Usage{Prompt: 1e6, Completion: 1e6}, 0.10, 0, true, true},
		{"all read", haiku, Usage{Prompt: 1e6, Cached: 1e6}, 0.01, 0.09, true, true},
		{"all written: costs more", haiku, Usage{Prompt: 1e6, CacheWrite: 1e6}, 0.125, -0.025, true, true},
		{"read, written and fresh", haiku, Usage{Prompt: 3e6, Cached: 1e6, CacheWrite: 1e6}, 0.235, 0.065, true, true},
		{"no cache prices: input price", Prices{In: 1, Out: 2, HasIn: true, HasOut: true}, Usage{Prompt: 1e6, Cached: 5e5}, 1, 0, true, true},
		{"unknown input price", Prices{Out: 2, HasOut: true}, Usage{Prompt: 1e6, Cached: 5e5}, 0, 0, false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in, _, ok := tc.p.Cost(tc.u)
			saving, known := tc.p.CacheSaving(tc.u)
			if ok != tc.ok || known != tc.savingKnown || math.Abs(in-tc.in) > 1e-12 || math.Abs(saving-tc.saving) > 1e-12 {
				t.Fatalf("in %v (%v), saving %v (%v); want %v, %v", in, ok, saving, known, tc.in, tc.saving)
			}
		})
	}
}
