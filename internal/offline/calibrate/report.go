package calibrate

import (
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
)

// WriteReport writes res as tables: per app set the old and fitted values and
// the samples used, per app the service time and startup delay, and the
// replay scores before and after calibration with PASS or FAIL.
func WriteReport(w io.Writer, res *Result) error {
	fmt.Fprintf(w, "Calibrated from %d run(s), %d ticks.\n\nApp sets (the config holds one value per set; * = applied):\n", res.Runs, res.Ticks)
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SET\tPARAMETER\tOLD\tFITTED\tSAMPLES\tNOTE")
	for _, s := range res.Sets {
		name := s.Domain + "/" + s.Set
		row(tw, name, "service_time", s.ServiceTime, dur)
		row(tw, name, "startup_time", s.StartupTime, dur)
		if s.CallRatio != nil {
			row(tw, name, "call_ratio", *s.CallRatio, trimFloat)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "\nApps:")
	tw = tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "APP\tSERVICE_TIME\tTICKS\tSTARTUP\tREPLICAS")
	for _, a := range res.Apps {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%d\n", a.App, fitted(a.ServiceTime, dur), a.ServiceTime.Samples, fitted(a.StartupTime, dur), a.StartupTime.Samples)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nReplay of the recorded demand and targets (target r >= %.2f):\n", res.After.Target)
	tw = tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SERIES\tR BEFORE\tR AFTER\tREL ERR BEFORE\tREL ERR AFTER\tTICKS\tRESULT")
	for _, a := range res.After.Scores {
		b, _ := res.Before.Score(a.Series)
		verdict := "PASS"
		switch {
		case a.Skipped:
			verdict = "SKIP"
		case !a.Pass:
			verdict = "FAIL"
		}
		if a.Note != "" {
			verdict += " (" + a.Note + ")"
		}
		fmt.Fprintf(tw, "%s\t%.3f\t%.3f\t%.3f\t%.3f\t%d\t%s\n", a.Series, b.R, a.R, b.RelErr, a.RelErr, a.N, verdict)
	}
	return tw.Flush()
}

func row(w io.Writer, set, param string, e Estimate, show func(float64) string) {
	mark := ""
	if e.Applied {
		mark = " *"
	}
	fmt.Fprintf(w, "%s\t%s\t%s\t%s%s\t%d\t%s\n", set, param, show(e.Old), fitted(e, show), mark, e.Samples, e.Note)
}

func fitted(e Estimate, show func(float64) string) string {
	if e.Samples == 0 {
		return "-"
	}
	return show(e.Fitted)
}

func dur(s float64) string { return seconds(s).String() }

func trimFloat(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) }
