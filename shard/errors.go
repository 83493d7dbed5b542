package shard

import (
	"fmt"
)

// errorf returns an error prefixed with the package name.
func errorf(format string, args ...any) error { return fmt.Errorf("shard: "+format, args...) }
