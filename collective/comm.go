package collective

import (
	"fmt"
	"sync"

	"github.com/klauspost/compress/zstd"

	"gnnrun/rank"
)

// DefaultMaxMessage is the default limit of one message to one peer.
const DefaultMaxMessage = 1 << 30

// Option configures a Comm.
type Option func(*options) error

type options struct {
	maxMessage    int
	compressAbove int // 0: never compress
}

func (o *options) setDefault() {
	o.maxMessage = DefaultMaxMessage
	o.compressAbove = 0
}

// MaxMessage limits every message to one peer to n bytes, 1 <= n <=
// rank.MaxMessage; larger payloads go in several rounds.
func MaxMessage(n int) Option {
	return func(o *options) error {
		if n < 1 || n > rank.MaxMessage {
			return fmt.Errorf("collective: message limit must be in [1, %d] bytes, got %d", rank.MaxMessage, n)
		}
		o.maxMessage = n
		return nil
	}
}

// CompressAbove compresses with zstd every message to another rank of at
// least n bytes; n = 0 turns compression off.
func CompressAbove(n int) Option {
	return func(o *options) error {
		if n < 0 {
			return fmt.Errorf("collective: compression threshold must be >= 0, got %d", n)
		}
		o.compressAbove = n
		return nil
	}
}

// Comm is a rank.Comm with the options of the typed collectives.
type Comm struct {
	rank.Comm
	o options

	codecOnce sync.Once
	enc       *zstd.Encoder
	dec       *zstd.Decoder
	codecErr  error
}

// New wraps c with the given options applied over the defaults.
func New(c rank.Comm, opts ...Option) (*Comm, error) {
	cc := &Comm{Comm: c}
	cc.o.setDefault()
	for _, opt := range opts {
		if err := opt(&cc.o); err != nil {
			return nil, err
		}
	}
	return cc, nil
}

// MustNew is New for options known to be valid; it panics on an error.
func MustNew(c rank.Comm, opts ...Option) *Comm {
	cc, err := New(c, opts...)
	if err != nil {
		panic(err)
	}
	return cc
}

// wrap gives a derived rank.Comm the options of c.
func (c *Comm) wrap(d rank.Comm, err error) (*Comm, error) {
	if err != nil {
		return nil, err
	}
	return &Comm{Comm: d, o: c.o}, nil
}

// Dup returns a duplicate communicator with the same options.
func (c *Comm) Dup() (*Comm, error) { return c.wrap(c.Comm.Dup()) }

// Split returns the communicator of the ranks with the same color, with the
// same options.
func (c *Comm) Split(color, key int) (*Comm, error) { return c.wrap(c.Comm.Split(color, key)) }

// SplitShared returns the node-local communicator with the same options.
func (c *Comm) SplitShared() (*Comm, error) { return c.wrap(c.Comm.SplitShared()) }

func (c *Comm) codec() (*zstd.Encoder, *zstd.Decoder, error) {
	c.codecOnce.Do(func() {
		c.enc, c.codecErr = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest))
		if c.codecErr == nil {
			c.dec, c.codecErr = zstd.NewReader(nil)
		}
	})
	return c.enc, c.dec, c.codecErr
}
