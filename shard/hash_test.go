package shard

import (
	"strings"
	"testing"

	"gnnrun/collective"
)

// TestConserved checks that the comparison of the tallies after a shuffle
// catches a lost item, an item that arrived under another ID and a row
// that changed on the way, with the items sent from one rank and received
// on the other.
func TestConserved(t *testing.T) {
	rows := [][]byte{{1, 2, 3, 4}, {5, 6, 7, 8}, {9, 10, 11, 12}}
	count := func(tl *tally, ids []int64, rows [][]byte) {
		for i, id := range ids {
			tl.n++
			tl.ids.Add(idHash(saltNode, id))
			tl.rows.Add(arrayRowHash(0, id, rows[i]))
		}
	}
	changed := [][]byte{rows[0], {5, 6, 7, 9}, rows[2]}
	for _, c := range []struct {
		name string
		ids  []int64
		rows [][]byte
		want string
	}{
		{"intact", []int64{10, 11, 12}, rows, ""},
		{"lost", []int64{10, 11}, rows[:2], "lost items: 3 sent, 2 received"},
		{"other ID", []int64{10, 11, 13}, rows, "checksum of the IDs"},
		{"row changed", []int64{10, 11, 12}, changed, "checksum of the rows"},
	} {
		world(t, 2, func(cm *collective.Comm) error {
			var sent, got tally
			if cm.Rank() == 0 {
				count(&sent, []int64{10, 11, 12}, rows)
			} else {
				count(&got, c.ids, c.rows)
			}
			err := conserved(cm, "node shuffle", &sent, &got)
			switch {
			case c.want == "" && err != nil:
				t.Errorf("%s: %v", c.name, err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Errorf("%s: %v, want an error with %q", c.name, err, c.want)
			}
			return nil
		})
	}
}
