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
	setPrice(&p.In, &p.HasIn, batchIn)
	setPrice(&p.CachedIn, &p.HasCachedIn, batchCachedIn)
	setPrice(&p.Out, &p.HasOut, batchOut)
	return p
}
