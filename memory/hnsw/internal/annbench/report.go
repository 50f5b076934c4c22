package annbench

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// Print writes the comparison as an aligned table.
func Print(w io.Writer, r *Result) {
	fmt.Fprintf(w, "%s: %d base vectors, %d queries, %d dimensions, cosine, recall@%d\n", r.Dataset, r.Base, r.Queries, r.Dim, r.K)
	fmt.Fprintf(w, "M %d, efConstruction %d, build threads %d (ours), GOMAXPROCS %d; searches on one goroutine, best of %d\n\n", r.M, r.EfConstr, r.Threads, r.GoMaxProcs, max(r.Repeat, 1))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "index\tef\trecall@k\tqueries/s\tqueries/cpu-s\tbuild s\tbuild cpu-s\theap MB\tnote\t")
	for _, row := range r.Rows {
		ef, build, buildCPU, mem := "-", "", "", ""
		if row.Ef > 0 {
			ef = fmt.Sprint(row.Ef)
		}
		if row.BuildSec > 0 {
			build = fmt.Sprintf("%.1f", row.BuildSec)
			buildCPU = fmt.Sprintf("%.1f", row.BuildCPU)
		}
		if row.HeapMB > 0 {
			mem = fmt.Sprintf("%.0f", row.HeapMB)
		}
		fmt.Fprintf(tw, "%s\t%s\t%.4f\t%.0f\t%.0f\t%s\t%s\t%s\t%s\t\n", row.Index, ef, row.Recall, row.QPS, row.CPUQPS, build, buildCPU, mem, row.Note)
	}
	tw.Flush()
	if r.ExportMB > 0 {
		fmt.Fprintf(w, "\nours exported: %.1f MB, imported in %.2f s\n", r.ExportMB, r.ImportSec)
	}
}
