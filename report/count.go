package report

import "strconv"

// Count formats n with thousands separators, "78,303", the form every
// summary and log line uses for counts.
func Count(n int64) string {
	if n < 0 {
		return "-" + Count(-n)
	}
	s := strconv.FormatInt(n, 10)
	out := make([]byte, 0, len(s)+len(s)/3)
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	return string(out)
}

// Bytes formats a byte count with a binary unit, "1.5 GiB".
func Bytes(n int64) string {
	const unit = 1024
	if n < unit && n > -unit {
		return strconv.FormatInt(n, 10) + " B"
	}
	f, i := float64(n), 0
	for (f >= unit || f <= -unit) && i < 6 {
		f /= unit
		i++
	}
	return strconv.FormatFloat(f, 'f', 1, 64) + " " + "KMGTPE"[i-1:i] + "iB"
}
