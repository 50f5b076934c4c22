package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/exocortex/exocortex/memory"
	"github.com/exocortex/exocortex/memory/service"
	"github.com/spf13/cobra"
	"golang.org/x/term"
)

func memImportCmd(f *memoryFlags) *cobra.Command {
	var allowBad bool
	cmd := &cobra.Command{
		Use:   "import FILE|-",
		Short: "Import JSONL records ({id?, area?, text, key?, tags?, metadata?, created?})",
		Long: `Import reads one JSON record per line; a record without an area goes to main,
as with memory add. Bad lines (not JSON, no text, not valid UTF-8, an invalid
area) are reported by number on stderr and skipped; the import goes on, and then
exits with status 1 so that a script notices, unless --allow-bad accepts them.
Progress goes to stderr: a bar on a terminal, plain lines otherwise.

Running an import again is safe: each line is known by its id, else its key, else
a hash of its line number and text, and lines already in the store are skipped. An
import that was killed half-way is finished by running it again.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var r io.Reader = cmd.InOrStdin()
			var size int64
			if args[0] != "-" {
				fh, err := os.Open(args[0])
				if err != nil {
					return err
				}
				defer fh.Close()
				if st, err := fh.Stat(); err == nil {
					size = st.Size()
				}
				r = fh
			}
			return f.withStore(cmd, func(s service.Remote) error {
				pr := newProgress(cmd.ErrOrStderr(), size)
				rep, err := s.Import(cmd.Context(), r, memory.Source{Session: f.session, Source: "import:" + filepath.Base(args[0])}, pr.update)
				pr.finish()
				if err != nil {
					return err
				}
				if f.json {
					if err := printJSON(cmd.OutOrStdout(), rep); err != nil {
						return err
					}
					return badImport(args[0], rep, allowBad)
				}
				for _, b := range rep.Bad {
					fmt.Fprintf(cmd.ErrOrStderr(), "%s:%d: %s\n", args[0], b.Line, b.Reason)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "imported %d records from %d lines; %d bad lines", rep.Imported, rep.Lines, len(rep.Bad))
				if rep.Skipped > 0 {
					fmt.Fprintf(cmd.OutOrStdout(), "; %d already in the store (skipped)", rep.Skipped)
				}
				fmt.Fprintln(cmd.OutOrStdout())
				return badImport(args[0], rep, allowBad)
			})
		},
	}
	cmd.Flags().BoolVar(&allowBad, "allow-bad", false, "exit 0 although some lines were bad (they are still named on stderr, or in --json's \"bad\")")
	return cmd
}

// badImport is the error of an import with bad lines (exit status 1), or nil
// when there were none or --allow-bad accepts them. The lines themselves were
// named already, on stderr or in the JSON report.
func badImport(file string, rep memory.ImportReport, allowBad bool) error {
	if len(rep.Bad) == 0 || allowBad {
		return nil
	}
	return &exitError{code: 1, err: fmt.Errorf("%d of the %d lines of %s were not imported (each is named above, or in the report's \"bad\"): correct them and import the file again (the records already in are skipped), or pass --allow-bad to accept the import without them",
		len(rep.Bad), rep.Lines, file)}
}

// progress shows import progress on w: a redrawn bar when w is a terminal, else a
// plain line every few seconds.
type progress struct {
	w        io.Writer
	tty      bool
	size     int64
	start    time.Time
	last     time.Time
	lastLine memory.ImportProgress
	// drawn is the line count last drawn (drewAny: something was).
	drawn   int
	drewAny bool
}

func newProgress(w io.Writer, size int64) *progress {
	tty := false
	if f, ok := w.(*os.File); ok {
		tty = term.IsTerminal(int(f.Fd()))
	}
	now := time.Now()
	// The first line waits for the interval too: a short import gets the
	// final line alone.
	return &progress{w: w, tty: tty, size: size, start: now, last: now}
}

func (p *progress) update(ip memory.ImportProgress) {
	p.lastLine = ip
	now := time.Now()
	every := 5 * time.Second
	if p.tty {
		every = 100 * time.Millisecond
	}
	if now.Sub(p.last) < every {
		return
	}
	p.last = now
	p.draw(false)
}

func (p *progress) draw(final bool) {
	ip := p.lastLine
	p.drawn, p.drewAny = ip.Lines, true
	rate := float64(ip.Imported) / max(time.Since(p.start).Seconds(), 1e-9)
	status := fmt.Sprintf("%d records, %d lines, %d bad, %.0f records/s", ip.Imported, ip.Lines, ip.Bad, rate)
	if !p.tty {
		fmt.Fprintf(p.w, "import: %s\n", status)
		return
	}
	bar := ""
	if p.size > 0 {
		frac := min(float64(ip.Bytes)/float64(p.size), 1)
		n := int(frac * 30)
		bar = fmt.Sprintf("[%s%s] %3.0f%% ", strings.Repeat("#", n), strings.Repeat(".", 30-n), frac*100)
	}
	fmt.Fprintf(p.w, "\r%s%s\x1b[K", bar, status)
	if final {
		fmt.Fprintln(p.w)
	}
}

// finish draws the final state, once: a plain line already showing it is
// not printed again (a bar is redrawn in place, and ended).
func (p *progress) finish() {
	if p.lastLine.Lines == 0 || (!p.tty && p.drewAny && p.drawn == p.lastLine.Lines) {
		return
	}
	p.draw(true)
}

func memExportCmd(f *memoryFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "export [FILE]",
		Short: "Write every memory as JSONL that import reads back (stdout without FILE)",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.withStore(cmd, func(s service.Remote) error {
				w := cmd.OutOrStdout()
				if len(args) == 1 {
					fh, err := os.Create(args[0])
					if err != nil {
						return err
					}
					defer fh.Close()
					w = fh
				}
				n, err := s.Export(cmd.Context(), w)
				if err != nil {
					return err
				}
				if len(args) == 1 {
					fmt.Fprintf(cmd.ErrOrStderr(), "exported %d records to %s\n", n, args[0])
				}
				return nil
			})
		},
	}
}
