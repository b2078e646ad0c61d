package screen

import "testing"

func TestBatchPricesAreHalfTheStandard(t *testing.T) {
	std := Prices{In: 2, CachedIn: 0.5, CacheWrite: 2.5, Out: 8, HasIn: true, HasCachedIn: true, HasOut: true}
	b := BatchPrices(std, nil, nil, nil)
	u := Usage{Prompt: 1000, Cached: 200, Completion: 300}
	in, out, _ := std.Cost(u)
	bin, bout, ok := b.Cost(u)
	if !ok || bin != in/2 || bout != out/2 || b.HasCacheWrite {
		t.Fatalf("batch %+v: %g %g of %g %g", b, bin, bout, in, out)
	}
}

func TestEstimateAtBatchPrices(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	in := EstimateInput{Prompts: []string{"Include?"}, Records: 100, RecordChars: 100 * 2000, TopPs: 1,
		Models: []EstimateModel{{Name: "m", Reps: 2, ModelPrices: ModelPrices{PriceIn: f(1), PriceOut: f(4)}}}}
	standard := Estimate(in)[0].Price
	in.Batch = true
	if half := Estimate(in)[0].Price; *half != *standard/2 {
		t.Errorf("batch estimate %v, want half of %v", *half, *standard)
	}
	in.Models[0].PriceBatchIn, in.Models[0].PriceBatchOut = f(1), f(4)
	if same := Estimate(in)[0].Price; *same != *standard {
		t.Errorf("batch estimate at the batch columns %v, want %v", *same, *standard)
	}
}
