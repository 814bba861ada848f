package trace

// Sum is the series summed minute by minute, as a domain's demand over all
// of a trace's series (every function of an azure-functions trace); as long
// as the longest series.
func Sum(series []Series) []float64 {
	var total []float64
	for _, s := range series {
		for i, v := range s.Values {
			if i == len(total) {
				total = append(total, 0)
			}
			total[i] += v
		}
	}
	return total
}
