package main

import (
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
)

var metisTime = regexp.MustCompile(`Partitioning:\s+([0-9.]+) sec`)

// runGpmetis partitions in's file with gpmetis (k-way, or recursive
// bisection with rb) and measures its .part file. The time is the one
// gpmetis reports for partitioning, without reading the file.
func runGpmetis(bin string, in *input, k, seed int, rb bool) (result, error) {
	args := []string{fmt.Sprintf("-seed=%d", seed)}
	if rb {
		args = append(args, "-ptype=rb")
	}
	args = append(args, in.path, strconv.Itoa(k))
	out, err := exec.Command(bin, args...).CombinedOutput()
	if err != nil {
		return result{}, fmt.Errorf("%s %s: %v\n%s", bin, strings.Join(args, " "), err, out)
	}
	m := metisTime.FindSubmatch(out)
	if m == nil {
		return result{}, fmt.Errorf("%s %s: no partitioning time in its output:\n%s", bin, strings.Join(args, " "), out)
	}
	secs, _ := strconv.ParseFloat(string(m[1]), 64)
	res, err := measure(in, fmt.Sprintf("%s.part.%d", in.path, k), k)
	res.secs = secs
	return res, err
}
