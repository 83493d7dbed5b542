package shard

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"gnnrun/collective"
)

var partDirName = regexp.MustCompile(`^part[0-9]+$`)

// existingPartition lists what in dir belongs to a partition: partition
// configs (this graph's <name>.json, or any JSON of this format) and
// part<i> directories. A missing dir holds nothing.
func existingPartition(dir, graphName string) (configs, parts []string, err error) {
	ents, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		switch {
		case e.IsDir() && partDirName.MatchString(e.Name()):
			parts = append(parts, p)
		case !e.IsDir() && e.Name() == ConfigName(graphName):
			configs = append(configs, p)
		case !e.IsDir() && strings.HasSuffix(e.Name(), ".json"):
			if info, err := e.Info(); err == nil && info.Size() < 1<<24 {
				if raw, err := os.ReadFile(p); err == nil && bytes.Contains(raw, []byte(`"format": "`+FormatName+`"`)) {
					configs = append(configs, p)
				}
			}
		}
	}
	return configs, parts, nil
}

// CheckOutput fails when dir already holds a partition, unless overwrite
// is set; it changes nothing. Rank 0 looks and tells the others, so all
// agree. It is collective.
func CheckOutput(c *collective.Comm, dir, graphName string, overwrite bool) error {
	var err error
	if c.Rank() == 0 {
		configs, parts, e := existingPartition(dir, graphName)
		switch {
		case e != nil:
			err = errorf("output directory: %v", e)
		case overwrite:
		case len(configs) > 0:
			err = errorf("%s already holds a partition (%s); pass --overwrite to replace it", dir, filepath.Base(configs[0]))
		case len(parts) > 0:
			err = errorf("%s already holds partition files (%s/); pass --overwrite to replace them", dir, filepath.Base(parts[0]))
		}
		if err == nil {
			if st, e := os.Stat(dir); e == nil && !st.IsDir() {
				err = errorf("output %s is a file, not a directory", dir)
			}
		}
	}
	return collective.Agree(c, err)
}

// clearOutput removes a previous partition from dir (its configs first, so
// it stops looking complete before anything else goes) and creates dir.
// It runs on rank 0; the others wait. It is collective.
func clearOutput(c *collective.Comm, dir, graphName string) error {
	var err error
	if c.Rank() == 0 {
		err = func() error {
			configs, parts, err := existingPartition(dir, graphName)
			if err != nil {
				return err
			}
			for _, p := range configs {
				if err := os.Remove(p); err != nil {
					return err
				}
			}
			for _, p := range parts {
				if err := os.RemoveAll(p); err != nil {
					return err
				}
			}
			return os.MkdirAll(dir, 0o755)
		}()
		if err != nil {
			err = errorf("output directory: %v", err)
		}
	}
	if err := collective.Agree(c, err); err != nil {
		return err
	}
	return c.Barrier()
}
