package screen

// BatchDiscount is the share of the standard price a batch line costs where the price table has
// no batch price: all three providers charge half for their batch APIs.
const BatchDiscount = 0.5

// BatchPrices are the prices of a batch line: the model's batch prices where the price table has
// them (model_prizes' batch columns; nil: none), else its standard prices at BatchDiscount. Cache
// writes have no batch column and are always discounted. The one place this rule lives.
func BatchPrices(p Prices, batchIn, batchCachedIn, batchOut *float64) Prices {
	p.In *= BatchDiscount
	p.CachedIn *= BatchDiscount
	p.CacheWrite *= BatchDiscount
	p.Out *= BatchDiscount
	for _, given := range []struct {
		price *float64
		to    *float64
		has   *bool
	}{{batchIn, &p.In, &p.HasIn}, {batchCachedIn, &p.CachedIn, &p.HasCachedIn}, {batchOut, &p.Out, &p.HasOut}} {
		if given.price != nil {
			*given.to, *given.has = *given.price, true
		}
	}
	return p
}
