package main

// A minimal METIS graph reader and writer, temporary: the bench will switch
// to graphio's METIS reader once it lands. It reads unweighted graphs (fmt 0
// or absent) and edge-weighted ones (fmt 1), which is what the Walshaw
// meshes and the generated R-MAT graphs are.

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"

	"gnnrun/parmetis/serial"
)

// readMetis reads a METIS .graph file into a serial.Graph with unit
// vertex weights.
func readMetis(path string) (*serial.Graph, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<28)
	var g *serial.Graph
	weighted := false
	line, v, n := 0, 0, 0
	for sc.Scan() {
		line++
		text := sc.Text()
		if strings.HasPrefix(text, "%") {
			continue
		}
		fs := strings.Fields(text)
		if g == nil {
			if g, weighted, err = metisHeader(fs); err != nil {
				return nil, fmt.Errorf("%s:%d: %v", path, line, err)
			}
			n = len(g.Vwgt)
			continue
		}
		if v >= n {
			if len(fs) == 0 {
				continue
			}
			return nil, fmt.Errorf("%s:%d: more vertex lines than the %d in the header", path, line, n)
		}
		if err := appendRow(g, fs, weighted); err != nil {
			return nil, fmt.Errorf("%s:%d: %v", path, line, err)
		}
		v++
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	if g == nil || v != n {
		return nil, fmt.Errorf("%s: %d vertex lines, header says %d", path, v, n)
	}
	return g, nil
}

func metisHeader(fs []string) (*serial.Graph, bool, error) {
	if len(fs) < 2 {
		return nil, false, fmt.Errorf("header needs n and m")
	}
	n, err := strconv.Atoi(fs[0])
	if err != nil || n < 0 {
		return nil, false, fmt.Errorf("bad vertex count %q", fs[0])
	}
	weighted := false
	if len(fs) > 2 {
		switch strings.TrimLeft(fs[2], "0") {
		case "":
		case "1":
			weighted = true
		default:
			return nil, false, fmt.Errorf("fmt %s not supported (only 0 and 1)", fs[2])
		}
	}
	g := &serial.Graph{NCon: 1, Xadj: make([]int64, 1, n+1), Vwgt: make([]int64, n)}
	for i := range g.Vwgt {
		g.Vwgt[i] = 1
	}
	return g, weighted, nil
}

func appendRow(g *serial.Graph, fs []string, weighted bool) error {
	step := 1
	if weighted {
		step = 2
	}
	if len(fs)%step != 0 {
		return fmt.Errorf("odd number of fields in a weighted row")
	}
	for i := 0; i < len(fs); i += step {
		u, err := strconv.Atoi(fs[i])
		if err != nil || u < 1 || u > len(g.Vwgt) {
			return fmt.Errorf("bad neighbour %q", fs[i])
		}
		w := 1
		if weighted {
			if w, err = strconv.Atoi(fs[i+1]); err != nil || w < 1 || w > math.MaxInt32 {
				return fmt.Errorf("bad edge weight %q (1 to 2^31-1)", fs[i+1])
			}
		}
		g.Adjncy = append(g.Adjncy, int32(u-1))
		g.Adjwgt = append(g.Adjwgt, int32(w))
	}
	g.Xadj = append(g.Xadj, int64(len(g.Adjncy)))
	return nil
}

// writeMetis writes g (unit vertex and edge weights assumed) as an
// unweighted METIS file.
func writeMetis(path string, g *serial.Graph) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	fmt.Fprintf(w, "%d %d\n", g.N(), len(g.Adjncy)/2)
	var buf []byte
	for v := range g.N() {
		buf = buf[:0]
		for i, u := range g.Adjncy[g.Xadj[v]:g.Xadj[v+1]] {
			if i > 0 {
				buf = append(buf, ' ')
			}
			buf = strconv.AppendInt(buf, int64(u)+1, 10)
		}
		buf = append(buf, '\n')
		w.Write(buf)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// readPart reads a .part file (one part per line) for n vertices.
func readPart(path string, n int) ([]int32, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	part := make([]int32, 0, n)
	for sc.Scan() {
		s := strings.TrimSpace(sc.Text())
		if s == "" {
			continue
		}
		p, err := strconv.Atoi(s)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", path, len(part)+1, err)
		}
		part = append(part, int32(p))
	}
	if len(part) != n {
		return nil, fmt.Errorf("%s: %d lines for %d vertices", path, len(part), n)
	}
	return part, sc.Err()
}

func writePart(path string, part []int32) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	for _, p := range part {
		w.WriteString(strconv.Itoa(int(p)))
		w.WriteByte('\n')
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
