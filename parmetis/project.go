package parmetis

import "gnnrun/collective"

// project gives every vertex of the finer graph the part of its coarse
// vertex, asking the owners of remote coarse vertices.
func project(fine, coarse *DistGraph, cmap []int64, cpart []int32) ([]int32, error) {
	lo, hi := coarse.Lo(), coarse.Lo()+int64(coarse.NLocal())
	part := make([]int32, fine.NLocal())
	var remote []int64
	for v, cv := range cmap {
		if cv >= lo && cv < hi {
			part[v] = cpart[cv-lo]
		} else {
			remote = append(remote, cv)
		}
	}
	got, err := collective.Request(fine.c, remote, coarse.Dist.Owner, func(_ int, keys []int64) ([]int32, error) {
		out := make([]int32, len(keys))
		for i, cv := range keys {
			out[i] = cpart[cv-lo]
		}
		return out, nil
	})
	if err != nil {
		return nil, err
	}
	k := 0
	for v, cv := range cmap {
		if cv < lo || cv >= hi {
			part[v] = got[k]
			k++
		}
	}
	return part, nil
}
