// Package python embeds the trainer-side client (python/gnnrun), which
// gnnrun train puts on every trainer's PYTHONPATH, so the binary needs no
// install step on the machines it runs on.
package python

import "embed"

// Client holds gnnrun/*.py.
//
//go:embed gnnrun/*.py
var Client embed.FS
