package screen

// BatchDiscount is the share of the standard price a batch line costs: all three providers charge
// half for their batch APIs. It is the one place this rule lives.
const BatchDiscount = 0.5

// BatchPrices are the prices of a batch line, from the model's standard prices.
func BatchPrices(p Prices) Prices {
	p.In *= BatchDiscount
	p.CachedIn *= BatchDiscount
	p.CacheWrite *= BatchDiscount
	p.Out *= BatchDiscount
	return p
}
