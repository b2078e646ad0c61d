package engine

import (
	"testing"

	"github.com/tabscreen/tabscreen/golib/screen"
)

func TestBatchPricesComeFromTheModelsBatchColumns(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	cases := []struct {
		name               string
		m                  ModelOptions
		wantIn, wantCached float64
		wantOut, wantWrite float64
	}{
		{"the columns win", ModelOptions{ModelPrices: screen.ModelPrices{PriceIn: f(1), PriceCachedIn: f(0.1), PriceOut: f(5),
			PriceCacheWrite: f(1.25), PriceBatchIn: f(0.4), PriceBatchCachedIn: f(0.04), PriceBatchOut: f(2)}}, 0.4, 0.04, 2, 0.625},
		{"without them, half the standard", ModelOptions{ModelPrices: screen.ModelPrices{PriceIn: f(1), PriceCachedIn: f(0.1), PriceOut: f(5), PriceCacheWrite: f(1.25)}},
			0.5, 0.05, 2.5, 0.625},
	}
	for _, tc := range cases {
		p := tc.m.batchPrices()
		if p.In != tc.wantIn || p.CachedIn != tc.wantCached || p.Out != tc.wantOut || p.CacheWrite != tc.wantWrite ||
			!p.HasIn || !p.HasCachedIn || !p.HasOut || !p.HasCacheWrite {
			t.Errorf("%s: %+v", tc.name, p)
		}
	}
}
