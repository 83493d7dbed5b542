package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strings"
)

// Result is how a step ended.
type Result string

// The results of a step. A missed goal is not a failure: a step fails
// when gnnrun's output is wrong or a command fails; its figures say how
// fast it was, against their goals.
const (
	Pass    Result = "pass"
	Fail    Result = "fail"
	Skipped Result = "skipped"
)

// Step is one step's record: what it measured, against which goals, and
// the commands that reproduce it (from the repository root).
type Step struct {
	Number   int            `json:"step"`
	Name     string         `json:"name"`
	Result   Result         `json:"result"`
	Reason   string         `json:"reason,omitempty"` // why it failed or was skipped
	Notes    []string       `json:"notes,omitempty"`
	Figures  []Figure       `json:"figures,omitempty"`
	Commands []string       `json:"commands"`
	Details  map[string]any `json:"details,omitempty"`
	Seconds  float64        `json:"seconds"`
}

// note adds a line to the step's notes.
func (st *Step) note(format string, args ...any) {
	st.Notes = append(st.Notes, fmt.Sprintf(format, args...))
}

// detail records v under key in the step's details.
func (st *Step) detail(key string, v any) {
	if st.Details == nil {
		st.Details = map[string]any{}
	}
	st.Details[key] = v
}

// skip ends the step as skipped, saying why.
func (st *Step) skip(format string, args ...any) {
	st.Result, st.Reason = Skipped, fmt.Sprintf(format, args...)
}

// Figure is one number a step measured. When Goal is set, Ratio (or Value
// where there is no ratio) is held against it and Met says whether it
// held.
type Figure struct {
	Name  string  `json:"name"`
	Value float64 `json:"value"`
	Unit  string  `json:"unit,omitempty"`
	// Ratio is the value against what it is compared with (RatioOf names
	// the quotient, e.g. "GatherPinned / HtoD").
	Ratio   *float64 `json:"ratio,omitempty"`
	RatioOf string   `json:"ratio_of,omitempty"`
	Goal    string   `json:"goal,omitempty"`
	Met     *bool    `json:"met,omitempty"`
	Note    string   `json:"note,omitempty"`
}

func fig(name string, value float64, unit string) Figure {
	return Figure{Name: name, Value: value, Unit: unit}
}

// ratio sets the figure's ratio and, when op is ">=" or "<", its goal.
func (f Figure) ratio(of string, r float64, op string, bound float64) Figure {
	f.Ratio, f.RatioOf = &r, of
	if op != "" {
		f = f.goal(op, bound)
	}
	return f
}

// goal sets the figure's goal: its ratio (or value, with no ratio) op
// bound, op ">=" or "<".
func (f Figure) goal(op string, bound float64) Figure {
	x, what := f.Value, f.Name
	if f.Ratio != nil {
		x, what = *f.Ratio, f.RatioOf
	}
	met := x >= bound
	sym := "≥"
	if op == "<" {
		met, sym = x < bound, "<"
	}
	if math.IsNaN(x) {
		met = false
	}
	f.Goal, f.Met = fmt.Sprintf("%s %s %s", what, sym, num(bound)), &met
	return f
}

func (f Figure) withNote(format string, args ...any) Figure {
	f.Note = fmt.Sprintf(format, args...)
	return f
}

// Report is what gpucheck writes to <out>.json.
type Report struct {
	Host    string `json:"host"`
	Started string `json:"started"`
	DryRun  bool   `json:"dry_run_host"`
	Device  string `json:"device"`
	Gnnrun  string `json:"gnnrun"`
	Python  string `json:"python"`
	Steps   []Step `json:"steps"`
	Passed  bool   `json:"passed"` // no step failed
	// GoalsMissed names the figures whose goals did not hold.
	GoalsMissed []string `json:"goals_missed"`
}

// finish sets Passed and GoalsMissed from the steps.
func (r *Report) finish() {
	r.Passed, r.GoalsMissed = true, []string{}
	for _, st := range r.Steps {
		if st.Result == Fail {
			r.Passed = false
		}
		for _, f := range st.Figures {
			if f.Met != nil && !*f.Met {
				r.GoalsMissed = append(r.GoalsMissed, fmt.Sprintf("step %d: %s (%s)", st.Number, f.Name, f.Goal))
			}
		}
	}
}

// write writes out.json and out.md.
func (r *Report) write(out string) error {
	blob, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(out+".json", append(blob, '\n'), 0o644); err != nil {
		return err
	}
	return os.WriteFile(out+".md", []byte(r.markdown()), 0o644)
}

// markdown renders the table of steps and figures, then each step's
// reasons, notes and commands.
func (r *Report) markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# gnnrun on a GPU (make gpu-check)\n\n")
	mode := ""
	if r.DryRun {
		mode = " — a dry run (--dry-run-host): no GPU was used, and the goals, a GPU's, say nothing here"
	}
	fmt.Fprintf(&b, "%s on %s, %s%s. gnnrun: `%s`; Python: `%s`.\n\n", r.Started, r.Host, r.Device, mode, r.Gnnrun, r.Python)
	b.WriteString("| step | result | figure | goal | ratio |\n|---|---|---|---|---|\n")
	for _, st := range r.Steps {
		name, res := fmt.Sprintf("%d. %s", st.Number, st.Name), string(st.Result)
		if st.Reason != "" {
			why, _, _ := strings.Cut(st.Reason, "\n")
			if r := []rune(why); len(r) > 300 {
				why = string(r[:300]) + "…"
			}
			fmt.Fprintf(&b, "| %s | %s | %s | | |\n", name, res, cell(why))
			name, res = "", ""
		}
		for _, f := range st.Figures {
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", name, res, cell(figureText(f)), cell(f.Goal), ratioText(f))
			name, res = "", ""
		}
	}
	if r.Passed {
		b.WriteString("\nNo step failed.")
	} else {
		b.WriteString("\nSome steps failed.")
	}
	if len(r.GoalsMissed) > 0 {
		fmt.Fprintf(&b, " Goals missed: %s.", strings.Join(r.GoalsMissed, "; "))
	}
	b.WriteString("\n")
	for _, st := range r.Steps {
		fmt.Fprintf(&b, "\n## %d. %s: %s\n\n", st.Number, st.Name, st.Result)
		if st.Reason != "" {
			fmt.Fprintf(&b, "%s\n\n", st.Reason)
		}
		for _, n := range st.Notes {
			fmt.Fprintf(&b, "- %s\n", n)
		}
		if len(st.Notes) > 0 {
			b.WriteString("\n")
		}
		if len(st.Commands) > 0 {
			b.WriteString("```\n" + strings.Join(st.Commands, "\n") + "\n```\n")
		}
	}
	return b.String()
}

func figureText(f Figure) string {
	s := fmt.Sprintf("%s: %s", f.Name, num(f.Value))
	if f.Unit != "" {
		s += " " + f.Unit
	}
	if f.Note != "" {
		s += " (" + f.Note + ")"
	}
	return s
}

func ratioText(f Figure) string {
	var s string
	if f.Ratio != nil {
		s = num(*f.Ratio)
	}
	if f.Met != nil {
		if s != "" {
			s += ", "
		}
		if *f.Met {
			s += "met"
		} else {
			s += "**missed**"
		}
	}
	return s
}

// cell makes s fit in a table cell.
func cell(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "|", `\|`), "\n", " ")
}

// num prints x with at most three decimals (integers whole, very large
// and very small numbers in exponent form).
func num(x float64) string {
	switch {
	case math.IsNaN(x) || math.IsInf(x, 0):
		return fmt.Sprint(x)
	case x == math.Trunc(x) && math.Abs(x) < 1e15:
		return fmt.Sprintf("%.0f", x)
	case math.Abs(x) >= 1e5 || math.Abs(x) < 1e-3:
		return fmt.Sprintf("%.3g", x)
	}
	return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.3f", x), "0"), ".")
}
