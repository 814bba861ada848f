package wire

// Clip shortens s to at most n bytes, cutting on a rune boundary: how a
// reason is fitted to a field's limit (MaxReason) before it is sent.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}
