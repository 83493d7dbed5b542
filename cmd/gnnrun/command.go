package main

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/spf13/pflag"

	"gnnrun/rank"
)

// command is one subcommand of gnnrun. Every command runs SPMD on every rank.
type command struct {
	name    string
	summary string // one line for the command list
	usage   string // the synopsis after "gnnrun "
	help    string // paragraphs for "gnnrun help <command>"
	// flags registers the command's flags; the values it binds are read by run.
	flags func(fs *pflag.FlagSet)
	run   func(e *env, args []string) error
}

var commands = map[string]*command{}

// register adds a command; each command's file registers itself in init.
func register(c *command) {
	if _, dup := commands[c.name]; dup {
		panic("gnnrun: command registered twice: " + c.name)
	}
	commands[c.name] = c
}

// commandOrder lists commands in pipeline order for the help text; others
// follow alphabetically.
var commandOrder = []string{"gen", "ingest-check", "partition", "dispatch", "inspect", "fetch", "sample", "pack", "info", "selftest"}

func sortedCommands() []*command {
	rank := map[string]int{}
	for i, n := range commandOrder {
		rank[n] = i
	}
	var out []*command
	for _, c := range commands {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool {
		ri, oki := rank[out[i].name]
		rj, okj := rank[out[j].name]
		if oki != okj {
			return oki
		}
		if oki {
			return ri < rj
		}
		return out[i].name < out[j].name
	})
	return out
}

func printUsage(w io.Writer) {
	fmt.Fprint(w, `gnnrun: the data side of distributed GNN training, one binary per rank.

Usage:
  gnnrun <command> [flags]            on one machine (a world of one rank)
  mpirun -np P gnnrun <command> ...   on P ranks (or srun under Slurm)

Commands:
`)
	for _, c := range sortedCommands() {
		fmt.Fprintf(w, "  %-14s %s\n", c.name, c.summary)
	}
	if !rank.MPI {
		fmt.Fprintf(w, "\nThis gnnrun is built %s.\n", noMPINote)
	}
	fmt.Fprint(w, `
Run "gnnrun help <command>" for a command's flags.
Every command also takes the common flags: -v (repeat for more detail),
--report FILE (per-stage JSON of every rank), --max-message BYTES,
--wire-zstd BYTES.
`)
}

func (c *command) flagSet(common *commonFlags) *pflag.FlagSet {
	fs := pflag.NewFlagSet(c.name, pflag.ContinueOnError)
	fs.SortFlags = false
	// run prints the help or the error itself; pflag's own usage would
	// print the flags a second time.
	fs.Usage = func() {}
	if c.flags != nil {
		c.flags(fs)
	}
	common.register(fs)
	return fs
}

func (c *command) printHelp(w io.Writer) {
	fmt.Fprintf(w, "Usage: gnnrun %s\n\n%s\n", c.usage, strings.TrimSpace(c.help))
	fs := c.flagSet(&commonFlags{})
	fmt.Fprintf(w, "\nFlags:\n%s", fs.FlagUsages())
}
