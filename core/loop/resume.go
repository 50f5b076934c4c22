package loop

import (
	"fmt"
	"strings"
)

// NoticeResumeCap is the Code of the notice that a monologue's final response
// stood although an extension asked, at message_loop_end, to keep it going:
// the monologue was resumed Options.MaxResumes times already.
const NoticeResumeCap = "resume_cap"

// resumeAsks are the resume messages of one message_loop_end firing, in
// extension order, with who asked.
type resumeAsks struct {
	names    []string
	messages []string
}

func (r *resumeAsks) add(ext, msg string) {
	r.names = append(r.names, ext)
	r.messages = append(r.messages, msg)
}

// resume decides whether the final iteration just ended is followed by
// another: an extension asked (the command bridge's Stop hooks do) and the
// monologue is under its cap. At the cap the operator is told, never silently.
func (a *Agent) resume(t *turn, res *Result, asks resumeAsks) bool {
	if len(asks.messages) == 0 {
		return false
	}
	who := strings.Join(asks.names, ", ")
	if a.opts.MaxResumes < 0 || t.resumed >= a.opts.MaxResumes {
		a.emit(Event{Type: EventNotice, Iteration: t.iteration, Extension: who, Code: NoticeResumeCap,
			Text: fmt.Sprintf("%s asked to keep the monologue going after its final response, but it was resumed %d times already (the cap, command_hooks.stop_continues): it ends here", who, t.resumed)})
		return false
	}
	t.resumed++
	res.Response = ""
	a.emit(Event{Type: EventNotice, Iteration: t.iteration, Extension: who,
		Text: fmt.Sprintf("%s kept the monologue going after its final response (%d of at most %d)", who, t.resumed, max(a.opts.MaxResumes, 0))})
	return true
}
