package screen

import "testing"

func TestBatchPricesAreHalfTheStandard(t *testing.T) {
	std := Prices{In: 2, CachedIn: 0.5, CacheWrite: 2.5, Out: 8, HasIn: true, HasCachedIn: true, HasOut: true}
	b := BatchPrices(std)
	u := Usage{Prompt: 1000, Cached: 200, Completion: 300}
	in, out, _ := std.Cost(u)
	bin, bout, ok := b.Cost(u)
	if !ok || bin != in/2 || bout != out/2 || b.HasCacheWrite {
		t.Fatalf("batch %+v: %g %g of %g %g", b, bin, bout, in, out)
	}
}
